import type { Db, Sql } from '../platform/db'
import type { HeldCoverage } from '../platform/held'
import { microsecondText } from '../platform/keyset'

/** audit_log as stored; `seq` and `hash` are set as the entry is sealed (audit_seal_locked, migrations/0024). */
export interface AuditRow {
  id: string
  chain: string
  seq: number
  hash: Buffer
  occurred_at: Date
  tenant_id: string | null
  subject_user_id: string | null
  actor_type: 'user' | 'api_key' | 'system' | 'anonymous'
  actor_id: string | null
  actor_label: string | null
  credential_id: string | null
  action: string
  target_type: string | null
  target_id: string | null
  outcome: 'success' | 'failure'
  reason: string | null
  ip: string | null
  user_agent: string | null
  request_id: string | null
  changes: Record<string, unknown> | null
  details: Record<string, unknown> | null
  /** The request's trace (migrations/0027): kept to find the entry's request in the traces, never shown by the API,
   *  the export or the audit.entry event, and outside the hash (toAuditEntry, audit_canonical). */
  trace_id: string | null
  /** The second canonical form (migrations/0091): the personal part's nonce (null once blanked) and its digest, which
   *  the hash covers in place of actor_label, ip and user_agent. Both null for entries sealed before it. */
  personal_nonce?: Buffer | null
  personal_digest?: Buffer | null
}

export type NewAuditRow = Omit<AuditRow, 'seq' | 'hash' | 'occurred_at' | 'personal_nonce' | 'personal_digest'>

/** Appends in the caller's transaction, unsealed (audit_inbox, migrations/0024): a rollback takes the entry with it,
 *  a commit keeps it, and the sealer or the next reader of its chain numbers and hashes it afterwards. */
export async function appendAuditEntry(db: Db, row: NewAuditRow): Promise<{ id: string }> {
  await db`select 1 from ${auditAppend(db, row)}`
  return { id: row.id }
}

/** The same append as a fragment, for a statement that writes a change and its entry at once (a sign-in's session). */
export const auditAppend = (db: Db, row: NewAuditRow) => db`audit_append(jsonb_populate_record(null::audit_log, ${db.json(row as never)}))`

/** The sealer's step: up to `most` waiting entries of chains no other sealer holds; answers how many it sealed. */
export async function sealAuditBatch(db: Db, most: number): Promise<number> {
  const [row] = await db<{ n: number }[]>`select audit_seal_batch(${most}) as n`
  return row!.n
}

/** How long the oldest entry still waiting to be sealed has waited, in seconds (0 when none waits). */
export async function oldestUnsealedAgeSeconds(db: Db): Promise<number> {
  const [row] = await db<{ age: number | null }[]>`
    select extract(epoch from clock_timestamp() - (select occurred_at from audit_inbox order by id limit 1))::float8 as age`
  return Math.max(0, row?.age ?? 0)
}

/** Before a read of these chains: every entry committed so far is sealed when this resolves. Each chain is sealed in
 *  a transaction of its own: a reader waiting for one chain's head (a sealer at work on it) then holds no other
 *  chain's head meanwhile, so the wait stays with the tenant whose chain is held. */
export async function sealAuditChains(db: Db, chains: readonly string[]): Promise<void> {
  for (const chain of chains) await db`select audit_seal_chains(array[${chain}]::text[])`
}

const sealListedChains = (db: Db, rows: readonly { chain: string }[]) =>
  sealAuditChains(
    db,
    rows.map((r) => r.chain),
  )

/** Before a read of one account's entries, which lie in its own chain and in its tenants'. */
export async function sealSubjectAudit(db: Db, userId: string): Promise<void> {
  await sealListedChains(db, await db<{ chain: string }[]>`select distinct chain from audit_inbox where subject_user_id = ${userId}`)
}

/** Before a read of the entries one user acted in, which lie in their own chain and in their tenants'. */
export async function sealActorAudit(db: Db, userId: string): Promise<void> {
  await sealListedChains(db, await db<{ chain: string }[]>`select distinct chain from audit_inbox where actor_id = ${userId}`)
}

/** The entries a user acted in (by session or by one of their tokens), in any chain, newest first. */
export async function listActorAudit(db: Db, userId: string, limit: number) {
  return db<AuditRow[]>`
    select * from audit_log where actor_id = ${userId} and actor_type in ('user', 'api_key') order by occurred_at desc, id desc limit ${limit}`
}

export interface AuditCursor {
  at: string
  id: string
}
export const auditCursorOf = (r: { cursor_at: string; id: string }): AuditCursor => ({ at: r.cursor_at, id: r.id })

export interface AuditFilter {
  tenantId: string
  from: Date
  to: Date
  actorId?: string
  actionPrefix?: string
  targetType?: string
  targetId?: string
  outcome?: 'success' | 'failure'
}

/** One tenant's entries in [from, to), newest first, keyset-paged on (occurred_at, id). */
export async function listTenantAudit(db: Db, f: AuditFilter, after: AuditCursor | null, limit: number) {
  return db<(AuditRow & { cursor_at: string })[]>`
    select *, ${db.unsafe(microsecondText('occurred_at'))} as cursor_at from audit_log
     where tenant_id = ${f.tenantId} and occurred_at >= ${f.from} and occurred_at < ${f.to}
       ${f.actorId ? db`and actor_id = ${f.actorId}` : db``}
       ${f.actionPrefix ? db`and starts_with(action, ${f.actionPrefix})` : db``}
       ${f.targetType ? db`and target_type = ${f.targetType}` : db``}
       ${f.targetId ? db`and target_id = ${f.targetId}` : db``}
       ${f.outcome ? db`and outcome = ${f.outcome}` : db``}
       ${after ? db`and (occurred_at, id) < (${after.at}::text::timestamptz, ${after.id}::uuid)` : db``}
     order by occurred_at desc, id desc
     limit ${limit}`
}

/** Entries about one account (its sign-ins and credentials, in any tenant), newest first. */
export async function listSubjectAudit(db: Db, userId: string, actions: readonly string[], after: AuditCursor | null, limit: number) {
  return db<(AuditRow & { cursor_at: string })[]>`
    select *, ${db.unsafe(microsecondText('occurred_at'))} as cursor_at from audit_log
     where subject_user_id = ${userId} and action = any(${actions as string[]})
       ${after ? db`and (occurred_at, id) < (${after.at}::text::timestamptz, ${after.id}::uuid)` : db``}
     order by occurred_at desc, id desc
     limit ${limit}`
}

export interface ChainCheck {
  verified: number
  first_broken_seq: number | null
  first_seq: number | null
  last_seq: number | null
}

/** Recomputes a tenant's chain over the entries in [from, to): each hash from its predecessor's stored hash and its
 *  own canonical form, and the sequence without gaps, from the entry before the window to the window's last. Both
 *  edges are held to what the chain must hold there, so deleting entries at either end is found too: the window's
 *  first entry follows the chain's previous entry, or, when none survives before it, the retention purge's mark (a
 *  chain's start purged by rule is not a break); the window's last entry is followed by the chain's next entry, or is
 *  the head. The first broken seq is the first entry whose link fails, or, past the last entry of the window (or of
 *  an empty window's neighbours), the first number the chain cannot account for. Time follows seq along a chain
 *  (migrations/0024), so the neighbours are found by time, through the tenant's time index. */
export async function verifyChain(db: Db, tenantId: string, from: Date, to: Date): Promise<ChainCheck> {
  const [row] = await db<ChainCheck[]>`
    with span as (
      select min(seq) as lo, max(seq) as hi from audit_log where tenant_id = ${tenantId} and occurred_at >= ${from} and occurred_at < ${to}
    ), edge as (
      select
        (select max(seq) from audit_log where tenant_id = ${tenantId} and occurred_at =
          (select max(occurred_at) from audit_log where tenant_id = ${tenantId} and occurred_at < ${from})) as prev_seq,
        (select min(seq) from audit_log where tenant_id = ${tenantId} and occurred_at =
          (select min(occurred_at) from audit_log where tenant_id = ${tenantId} and occurred_at >= ${to})) as next_seq,
        h.seq as head_seq, coalesce(h.purged_through, 0) as purged_through
        from (select 1) one left join audit_chain_heads h on h.chain = ${tenantId}::text
    ), links as (
      select a.seq,
             a.hash = audit_link(lag(a.hash) over w, a) and audit_personal_ok(a) and a.seq = coalesce(lag(a.seq) over w, a.seq - 1) + 1 as ok,
             row_number() over w as n
        from audit_log a, span, edge
       where a.chain = ${tenantId}::text and a.seq between coalesce(edge.prev_seq, span.lo) and span.hi
      window w as (order by a.seq)
    )
    select count(links.seq) filter (where links.seq >= span.lo)::int as verified,
           least(
             min(links.seq) filter (where links.seq >= span.lo and not links.ok
               and not (links.n = 1 and links.seq > 1 and links.seq <= edge.purged_through + 1)),
             case when span.hi is not null and coalesce(edge.next_seq, edge.head_seq + 1) <> span.hi + 1 then span.hi + 1 end,
             case when span.lo is null and edge.prev_seq is not null and coalesce(edge.next_seq, edge.head_seq + 1) <> edge.prev_seq + 1
                  then edge.prev_seq + 1 end,
             case when span.lo is null and edge.prev_seq is null and coalesce(edge.next_seq, edge.head_seq + 1) > edge.purged_through + 1
                  then edge.purged_through + 1 end
           ) as first_broken_seq,
           span.lo as first_seq, span.hi as last_seq
      from span cross join edge left join links on true
     group by span.lo, span.hi, edge.prev_seq, edge.next_seq, edge.head_seq, edge.purged_through`
  return row!
}

export async function chainHead(db: Db, chain: string): Promise<{ seq: number; hash: Buffer | null } | undefined> {
  const [row] = await db<{ seq: number; hash: Buffer | null }[]>`select seq, hash from audit_chain_heads where chain = ${chain}`
  return row
}

export async function countTenantAudit(db: Db, tenantId: string, from: Date, to: Date, cap: number): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from (select 1 from audit_log where tenant_id = ${tenantId} and occurred_at >= ${from} and occurred_at < ${to} limit ${cap + 1}) s`
  return row!.n
}

/** The span of one tenant's entries in [from, to) up to `lastSeq` (the head an export is cut at), by sequence
 *  number. Time follows sequence within a chain, so the span is the window's entries; lo is null when it is empty. */
export async function exportSpan(db: Db, tenantId: string, from: Date, to: Date, lastSeq: number): Promise<{ lo: number | null; hi: number | null }> {
  const [row] = await db<{ lo: number | null; hi: number | null }[]>`
    select min(seq) as lo, max(seq) as hi from audit_log
     where tenant_id = ${tenantId} and occurred_at >= ${from} and occurred_at < ${to} and seq <= ${lastSeq}`
  return row!
}

export type ExportRow = AuditRow & { occurred_at_micros: number; prev_hash: Buffer | null }

/** The export's batch: the window's entries numbered in (afterSeq, afterSeq + size], in sequence order, each with
 *  its time in microseconds (as audit_canonical has it) and its predecessor's hash. The row numbered afterSeq is
 *  read too, so the first entry of a batch has its predecessor; a missing one (a gap) leaves prev_hash null. */
export async function exportBatch(db: Db, tenantId: string, from: Date, to: Date, afterSeq: number, size: number): Promise<ExportRow[]> {
  return db<ExportRow[]>`
    select * from (
      select a.*, (extract(epoch from a.occurred_at) * 1000000)::bigint as occurred_at_micros,
             case when lag(a.seq) over w = a.seq - 1 then lag(a.hash) over w end as prev_hash
        from audit_log a
       where a.chain = ${tenantId} and a.seq between ${afterSeq} and ${afterSeq + size}
      window w as (order by a.seq)
    ) s
     where s.seq > ${afterSeq} and s.occurred_at >= ${from} and s.occurred_at < ${to}
     order by s.seq`
}

/** The retention purge: entries older than `before`, in batches, the only delete the table's trigger admits. Time
 *  follows seq along a chain, so each batch takes the oldest entries of each chain it touches, and the chain's head
 *  records how far its start was purged (the verification holds the chain's oldest entry to that mark).
 *
 *  What a legal hold covers stays (`held`, api/platform/held.ts): a tenant held whole keeps its chain, a held person
 *  their account chain. A member or project hold covers entries inside its tenant's chain (the member as actor,
 *  subject or target; the project as target), and a chain can only lose its start and still verify, so that chain is
 *  purged up to its first covered entry and no further: the entries after it stay too, until the hold is released. */
export async function purgeAuditEntries(sql: Sql, before: Date, batch: number, held: HeldCoverage): Promise<number> {
  const wholeChains = [...held.tenantIds, ...held.accountUserIds]
  return sql.begin(async (tx) => {
    await tx`set local rcp.audit_purge = 'on'`
    const [row] = await tx<{ n: number }[]>`
      with member as (
        select * from unnest(${held.members.tenantIds}::uuid[], ${held.members.userIds}::uuid[]) as m(tenant_id, user_id)
      ), project as (
        select * from unnest(${held.projects.tenantIds}::uuid[], ${held.projects.projectIds}::uuid[]) as p(tenant_id, project_id)
      ), stops as (
        select a.chain, min(a.seq) as seq from audit_log a
         where a.occurred_at < ${before}
           and a.tenant_id in (select tenant_id from member union select tenant_id from project)
           and (exists (select 1 from member m
                         where m.tenant_id = a.tenant_id
                           and (a.actor_id = m.user_id::text or a.subject_user_id = m.user_id or a.target_id = m.user_id::text))
                or exists (select 1 from project p
                            where p.tenant_id = a.tenant_id and a.target_type = 'project' and a.target_id = p.project_id::text))
         group by a.chain
      ), gone as (
        delete from audit_log where id in (
          select a.id from audit_log a left join stops s on s.chain = a.chain
           where a.occurred_at < ${before} and a.chain <> all(${wholeChains}::text[]) and (s.seq is null or a.seq < s.seq)
           order by a.occurred_at, a.seq limit ${batch})
        returning chain, seq
      ), marked as (
        update audit_chain_heads h set purged_through = g.seq
          from (select chain, max(seq) as seq from gone group by chain) g
         where h.chain = g.chain and g.seq > h.purged_through
      )
      select count(*)::int as n from gone`
    return row!.n
  })
}

/** One batch of a deleted tenant's entries: the next `most` of its chain after seq `after` lose their personal part
 *  (migrations/0100). The caller keeps `through` and passes it back as `after`; a batch that walked none is the end. */
export async function eraseTenantPersonalBatch(
  tx: Db,
  tenantId: string,
  after: number,
  most: number,
): Promise<{ walked: number; blanked: number; through: number }> {
  const [row] = await tx<{ walked: number; blanked: number; through: number }[]>`
    select walked, blanked, through from audit_erase_tenant_batch(${tenantId}::uuid, ${after}::bigint, ${most}::int)`
  return row!
}

/** Blanks the personal part (label, address, user agent, details.email, changes.displayName, nonce) of the second-form
 *  entries a person acted in, is the subject of or is named in by address, or of one tenant's entries; the chain keeps each part's digest and still verifies (migrations/0091).
 *  Answers how many entries it blanked. */
export async function erasePersonalParts(tx: Db, of: { userId?: string; email?: string; tenantId?: string }): Promise<number> {
  const [row] = await tx<{ n: number }[]>`
    select audit_erase_personal(${of.userId ?? null}::uuid, ${of.email ?? null}::text, ${of.tenantId ?? null}::uuid) as n`
  return row!.n
}
