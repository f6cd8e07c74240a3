// What the housekeeping schedule does with project memberships that end (activities/housekeeping.ts): the warning 7
// days ahead and the expired notice, each in the transaction of its cause (marking the warning given, deleting the
// row), deduplicated by a key, and its mail started after the commit.
import type { ServiceDeps } from '../api/platform/deps'
import { dispatchNoticeMail, notify } from '../api/notifications/service'
import { purgeExpiredProjectMembers, takeExpiryWarnings } from '../api/project-members/queries'

type Deps = Pick<ServiceDeps, 'sql' | 'keys' | 'mail'>

/** How long before its expiry a membership is warned of it (GitLab's figure). */
export const EXPIRY_WARNING = '7 days'

/** One batch of warnings: memberships whose expiry is within EXPIRY_WARNING and not yet warned for that expiry; how
 *  many were taken. The key names the expiry and the row's version, so a moved expiry is warned again, even back to
 *  an earlier date, while a retried batch adds nothing. */
export async function warnExpiringProjectMembers(deps: Deps, limit: number): Promise<number> {
  const { taken, notes } = await deps.sql.begin(async (tx) => {
    const rows = await takeExpiryWarnings(tx, EXPIRY_WARNING, limit)
    const notes = []
    for (const r of rows) {
      const expiresAt = r.expires_at.toISOString()
      notes.push(
        await notify(tx, deps.keys, {
          userId: r.user_id,
          tenantId: r.tenant_id,
          kind: 'project.membership_expiring',
          fields: { projectId: r.project_id, projectName: r.project_name, role: r.role, expiresAt },
          dedupeKey: `project_member_expiring:${r.id}:${expiresAt}:${r.version}`,
        }),
      )
    }
    return { taken: rows.length, notes }
  })
  await dispatchNoticeMail(deps, null, notes)
  return taken
}

/** One batch of expired memberships removed, each member told in the removal's transaction; how many. */
export async function removeExpiredProjectMembers(deps: Deps, limit: number): Promise<number> {
  const { removed, notes } = await deps.sql.begin(async (tx) => {
    const rows = await purgeExpiredProjectMembers(tx, limit)
    const notes = []
    for (const r of rows) {
      notes.push(
        await notify(tx, deps.keys, {
          userId: r.user_id,
          tenantId: r.tenant_id,
          kind: 'project.membership_expired',
          fields: { projectId: r.project_id, projectName: r.project_name, role: r.role, expiredAt: r.expires_at.toISOString() },
          dedupeKey: `project_member_expired:${r.id}`,
        }),
      )
    }
    return { removed: rows.length, notes }
  })
  await dispatchNoticeMail(deps, null, notes)
  return removed
}
