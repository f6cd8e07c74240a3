import postgres from 'postgres'

const LOCK_WAIT = '15s'
const ATTEMPTS = 3

/** Deletes a tenant's row, and by the schema's cascade all it owns, as an operator would: on a connection of its
 *  own, so a pool busy with other tests' work cannot hold the statement back. A wait on another session's lock ends
 *  after LOCK_WAIT with the sessions it waited on logged (the suite once hung here for a full minute with nothing
 *  to show), and the delete is tried again: the cascade itself must never be what refuses it, so any other error
 *  (a RESTRICT reference, say) fails at once. */
export async function deleteTenantRow(databaseUrl: string, tenantId: string): Promise<void> {
  const db = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  try {
    for (let attempt = 1; ; attempt++) {
      const waited = await db
        .begin(async (tx) => {
          await tx`select set_config('lock_timeout', ${LOCK_WAIT}, true)`
          await tx`delete from tenants where id = ${tenantId}`
          return null
        })
        .catch(async (err: { code?: string }) => {
          if (err.code !== '55P03' || attempt === ATTEMPTS) throw err
          return blockers(db)
        })
      if (waited === null) return
      console.warn(`[tenant-row] delete of tenant ${tenantId} waited ${LOCK_WAIT} on a lock (attempt ${attempt}); sessions then:\n${waited}`)
    }
  } finally {
    await db.end({ timeout: 5 })
  }
}

async function blockers(db: postgres.Sql): Promise<string> {
  const rows = await db<{ pid: number; state: string; wait: string | null; age: string; query: string }[]>`
    select pid, state, wait_event_type || ':' || wait_event as wait, (now() - xact_start)::text as age, left(query, 300) as query
      from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null
     order by xact_start`
  return rows.map((r) => `  pid ${r.pid} ${r.state} ${r.wait ?? ''} in transaction for ${r.age}: ${r.query}`).join('\n')
}
