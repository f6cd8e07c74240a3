import { z } from 'zod'
import { PageQuery } from '../platform/pagination'
import { singleLineText } from '../platform/text'

export const HOLD_SCOPE_KINDS = ['tenant', 'member', 'project'] as const

// The kind is free text to the schema on purpose: an unknown kind is LEGAL_HOLD_SCOPE_INVALID (the published code
// for it), not a generic VALIDATION_ERROR; the service decides.
const HoldScopeInput = z
  .strictObject({
    kind: z.string().max(40).describe('tenant (everything of this tenant), member (one user, with userId) or project (one project, with projectId)'),
    userId: z.uuid().optional().describe('The held member (kind member only)'),
    projectId: z.uuid().optional().describe('The held project (kind project only)'),
  })
  .describe('Exactly one scope: the whole tenant, one member or one project')
  // The variants the service enforces, stated in the document only (zod metadata), so an unknown kind stays
  // LEGAL_HOLD_SCOPE_INVALID rather than a schema error.
  .meta({
    oneOf: [
      { properties: { kind: { const: 'tenant' }, userId: false, projectId: false }, required: ['kind'] },
      { properties: { kind: { const: 'member' }, projectId: false }, required: ['kind', 'userId'] },
      { properties: { kind: { const: 'project' }, userId: false }, required: ['kind', 'projectId'] },
    ],
  })

export const CreateLegalHoldBodyDto = z
  .strictObject({
    matter: singleLineText(200).describe('The matter (case, investigation) the hold preserves data for'),
    reason: z.string().trim().min(1).max(2000).describe('Why the hold is placed'),
    scope: HoldScopeInput.optional(),
  })
  // scope is optional to zod so that a missing one is LEGAL_HOLD_SCOPE_INVALID; the document says it is needed.
  .meta({ id: 'CreateLegalHoldBodyDto', required: ['matter', 'reason', 'scope'] })

export const LegalHoldDto = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    matter: z.string(),
    reason: z.string(),
    scope: z.object({
      kind: z.enum(HOLD_SCOPE_KINDS),
      userId: z.uuid().nullable(),
      projectId: z.uuid().nullable(),
    }),
    status: z.enum(['active', 'released']),
    createdBy: z.uuid(),
    createdAt: z.iso.datetime(),
    releasedAt: z.iso.datetime().nullable(),
    releasedBy: z.uuid().nullable(),
  })
  .meta({ id: 'LegalHoldDto' })

export const LegalHoldParams = z.object({ holdId: z.string() })
export const ListLegalHoldsQuery = PageQuery.extend({
  status: z.enum(['active', 'released']).optional().describe('Only active or only released holds; both when absent'),
})

export type CreateLegalHoldInput = z.infer<typeof CreateLegalHoldBodyDto>
export type LegalHold = z.infer<typeof LegalHoldDto>
