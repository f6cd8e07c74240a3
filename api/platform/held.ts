// What the active legal holds keep from the retention purges (api/legal-holds/queries.ts heldCoverage reads it; the
// purges of audit entries, events, webhook messages and idempotency keys take it). It lives here, below every
// domain, because those purges belong to domains the legal-holds domain itself imports (audit, events): they take the
// coverage as a value rather than ask the holds table.
export interface HeldCoverage {
  /** Tenants held whole: nothing of theirs is purged. */
  tenantIds: string[]
  /** Members held: pairs by index (tenantIds[i], userIds[i]). */
  members: { tenantIds: string[]; userIds: string[] }
  /** Projects held: pairs by index (tenantIds[i], projectIds[i]). */
  projects: { tenantIds: string[]; projectIds: string[] }
  /** People whose own account trail and per-user records are held: members held anywhere, and every member of a
   *  tenant held whole. */
  accountUserIds: string[]
}
