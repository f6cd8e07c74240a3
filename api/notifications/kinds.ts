// Every kind of notification, declared once: its fields (validated on write, so a row holds exactly these), whether
// it mails by default, and the one line its mail and the console show. No kind carries a secret, a code, a token or a
// link that grants anything (test/unit/notification-kinds.test.ts checks every field name against a deny-list).
import { z } from 'zod'

const kind = <S extends z.ZodObject>(fields: S, mailByDefault: boolean, line: (f: z.infer<S>) => string) => ({ fields, mailByDefault, line })

const finished = z.enum(['ready', 'failed'])

export const notificationKinds = {
  'tenant.invitation_received': kind(
    z.strictObject({ invitationId: z.uuid(), tenantName: z.string(), role: z.string(), expiresAt: z.iso.datetime() }),
    // Off: the invitation's own mail (with its link) goes to the address already.
    false,
    (f) => `You are invited to ${f.tenantName} as ${f.role}; the invitation mail holds the link`,
  ),
  'edge_package.build_finished': kind(
    z.strictObject({ packageId: z.uuid(), modelVersionId: z.uuid(), targetArch: z.string(), status: finished }),
    false,
    (f) => `The edge package ${f.packageId} you requested is ${f.status}`,
  ),
  'model_version.validation_finished': kind(
    z.strictObject({ modelVersionId: z.uuid(), name: z.string(), status: finished }),
    false,
    (f) => `The validation of model version ${f.name} you started is ${f.status}`,
  ),
  'audit_export.ready': kind(
    z.strictObject({ exportId: z.uuid(), entries: z.number().int() }),
    false,
    (f) => `The audit log export ${f.exportId} you asked for is ready (${f.entries} entries)`,
  ),
  // The project memberships' three (api/project-members): the project by id and name, the project role, and when
  // the membership ends. grantedBy is a user id (who added it), never how they could be reached.
  'project.membership_added': kind(
    z.strictObject({ projectId: z.uuid(), projectName: z.string(), role: z.string(), expiresAt: z.iso.datetime().nullable(), grantedBy: z.uuid() }),
    false,
    (f) => `You were added to the project ${f.projectName} as ${f.role}${f.expiresAt ? ` until ${f.expiresAt}` : ''}`,
  ),
  'project.membership_expiring': kind(
    z.strictObject({ projectId: z.uuid(), projectName: z.string(), role: z.string(), expiresAt: z.iso.datetime() }),
    // On: the one warning before access ends, while there is still time to ask for more.
    true,
    (f) => `Your ${f.role} membership of the project ${f.projectName} expires at ${f.expiresAt}`,
  ),
  'project.membership_expired': kind(
    z.strictObject({ projectId: z.uuid(), projectName: z.string(), role: z.string(), expiredAt: z.iso.datetime() }),
    false,
    (f) => `Your ${f.role} membership of the project ${f.projectName} expired at ${f.expiredAt}`,
  ),
  'account.passkey_added': kind(z.strictObject({ passkeyId: z.uuid() }), true, () => 'A passkey was added to your account'),
  'account.passkey_removed': kind(z.strictObject({ passkeyId: z.uuid() }), true, () => 'A passkey was removed from your account'),
  'account.totp_enrolled': kind(z.strictObject({}), true, () => 'An authenticator app (TOTP) was enrolled on your account'),
  'account.totp_removed': kind(z.strictObject({}), true, () => 'The authenticator app (TOTP) was removed from your account'),
  'account.new_sign_in': kind(
    z.strictObject({ method: z.enum(['password', 'passkey', 'sso']), client: z.string(), network: z.string() }),
    true,
    (f) => `A sign-in (${f.method}) from a new client: ${f.client}, network ${f.network}`,
  ),
} as const

export type NotificationKind = keyof typeof notificationKinds
export type NotificationFields<K extends NotificationKind> = z.infer<(typeof notificationKinds)[K]['fields']>
export const NOTIFICATION_KIND_NAMES = Object.keys(notificationKinds) as [NotificationKind, ...NotificationKind[]]

export const isNotificationKind = (k: string): k is NotificationKind => Object.hasOwn(notificationKinds, k)

/** The line a stored notification shows (its fields were validated when written). */
export const lineOf = (k: NotificationKind, fields: unknown): string => (notificationKinds[k].line as (f: unknown) => string)(fields)
