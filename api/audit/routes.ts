import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import { getAuditExport, startAuditExport } from '../audit-exports/service'
import {
  AuditEntryDto,
  AuditExportDto,
  AuditExportParams,
  AuditTimeRangeBodyDto,
  AuditVerificationDto,
  ListAuditLogQuery,
  SecurityActivityQuery,
} from './model'
import { listSecurityActivity, listTenantAuditLog, verifyTenantAuditLog } from './service'

/** The audit trail's readers. Nothing here writes an entry or can alter one: entries are written only by the
 *  changes they describe (recordAudit), and the table refuses UPDATE and DELETE. */
export const auditRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ tags: ['Audit log'] })
    .use(http)
    .get('/tenants/current/audit-log', async ({ request, ctx, query }) => page(request, await listTenantAuditLog(deps, ctx, query)), {
      auth: 'tenant:manage',
      errors: ['T400p'],
      query: ListAuditLogQuery,
      response: { 200: listEnvelope(AuditEntryDto) },
      detail: {
        summary: "The current tenant's audit trail in a window (from and to required), newest first, filtered by actor, action prefix, target and outcome",
      },
    })
    .post('/tenants/current/audit-log/verifications', async ({ request, ctx, body }) => ok(request, await verifyTenantAuditLog(deps, ctx, body)), {
      auth: 'tenant:manage',
      errors: ['T400'],
      body: AuditTimeRangeBodyDto,
      response: { 200: envelope(AuditVerificationDto) },
      detail: { summary: "Recompute the tenant's hash chain over a window: how many entries were verified and the first broken sequence number, if any" },
    })
    // The storage conditions (STORAGE_NOT_READY, ...) are only in S400, so the export declares both sets (and T409 for
    // IDEMPOTENCY_CONFLICT).
    .post(
      '/tenants/current/audit-log/exports',
      async ({ request, ctx, body, set }) => {
        set.status = 201
        return ok(request, await startAuditExport(deps, ctx, body))
      },
      {
        auth: 'tenant:manage',
        idempotent: true,
        errors: ['T400', 'S400', 'T409'],
        body: AuditTimeRangeBodyDto,
        response: { 201: envelope(AuditExportDto) },
        detail: {
          ...links({ exportId: '$response.body#/data/id' }, ['GET /v1/tenants/current/audit-log/exports/{exportId}']),
          summary: "Export the tenant's trail over a window (up to the retention period) as gzip NDJSON into its export bucket; follow the job with GET",
        },
      },
    )
    .get('/tenants/current/audit-log/exports/:exportId', async ({ request, ctx, params }) => ok(request, await getAuditExport(deps, ctx, params.exportId)), {
      auth: 'tenant:manage',
      errors: ['T400', 'T404'],
      params: AuditExportParams,
      response: { 200: envelope(AuditExportDto) },
      detail: { summary: 'An export job: its progress, the SHA-256 and chain head of its file, and when done a download link valid 15 minutes' },
    })
    .get('/users/me/security-activity', async ({ request, ctx, query }) => page(request, await listSecurityActivity(deps, ctx, query)), {
      auth: 'user',
      errors: ['A400p'],
      query: SecurityActivityQuery,
      response: { 200: listEnvelope(AuditEntryDto) },
      detail: { summary: 'Your own recent sign-ins and credential changes, across every tenant, newest first', tags: ['Users'] },
    })
