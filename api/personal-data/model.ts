import { z } from 'zod'
import { ApiKeySummaryDto } from '../api-keys/model'
import { AuditEntryDto } from '../audit/model'
import { WebAuthnCredentialDto } from '../mfa/model'
import { CurrentUserSessionDto } from '../sessions/model'
import { SsoIdentityDto } from '../sso/model'
import { MembershipSummaryDto, UserDto } from '../users/model'

/** How recently the session must have proven who it is (a sign-in, or a second-factor answer) to erase its account. */
export const ERASURE_REAUTHENTICATION_SECONDS = 5 * 60
/** How long an erased account's address is refused to a new account. */
export const ERASED_ADDRESS_HOLD_DAYS = 30

export const AccountErasureDto = z
  .object({
    userId: z.uuid(),
    erasedAt: z.iso.datetime(),
    sessionsEnded: z.number().int(),
    tokensRevoked: z.number().int(),
    membershipsRemoved: z.number().int(),
    addressReusableAt: z.iso.datetime().describe('When the address may register a new account'),
  })
  .meta({ id: 'AccountErasureDto' })

/** How many of the person's own audit entries an export carries (newest first); `auditEntriesTruncated` says when
 *  there were more (the tenant's export and the retention period bound the rest). */
export const EXPORT_AUDIT_ENTRIES_MAX = 10_000
/** A person's live sessions, passkeys and linked identities are listed up to this many each. */
export const EXPORT_LIST_MAX = 1000

export const PersonalDataExportDto = z
  .object({
    exportedAt: z.iso.datetime(),
    profile: UserDto,
    memberships: z.array(MembershipSummaryDto),
    sessions: z.array(CurrentUserSessionDto).describe('Live sessions: where and when, never their tokens'),
    tokens: z.array(ApiKeySummaryDto).describe('Every personal access token, revoked and expired ones too: metadata, never the token or its hash'),
    secondFactors: z.object({
      totp: z.object({ status: z.string(), activatedAt: z.iso.datetime().nullable() }).nullable(),
      recoveryCodesLeft: z.number().int(),
      passkeys: z.array(WebAuthnCredentialDto).describe('Public metadata; the public key is not included'),
    }),
    ssoIdentities: z.array(SsoIdentityDto),
    auditEntries: z.array(AuditEntryDto).describe(`The entries you acted in, by session or token, newest first (at most ${EXPORT_AUDIT_ENTRIES_MAX})`),
    auditEntriesTruncated: z.boolean(),
  })
  .meta({ id: 'PersonalDataExportDto' })
