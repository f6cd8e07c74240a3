import { afterAll, expect } from 'bun:test'
import { createDb } from '../../api/platform/db'
import { killChildrenOnExit } from '../../scripts/platform'
import { seenSecrets } from './secrets'

// Tests talk to real servers that scripts/test.ts starts; running `bun test` alone would only produce
// confusing connection errors, so say what to run instead.
for (const name of ['DATABASE_URL', 'SECRET_KEY', 'TEMPORAL_ADDRESS']) {
  if (!process.env[name]) {
    console.error(`\n${name} is not set: run the suite with ./scripts/test (it starts Postgres, Temporal, MinIO and the mail catcher)\n`)
    process.exit(2)
  }
}

// Servers and processes a test starts (spawnChild) run in their own process groups: killed with this process.
killChildrenOnExit()

// After the last test of the run: no secret any flow created or sent (test/support/secrets.ts) is in any audit
// entry or any audit.entry event, whichever test wrote it.
afterAll(async () => {
  if (seenSecrets.size === 0) return
  const sql = createDb(process.env.DATABASE_URL!, { max: 1, name: 'rcp-secret-scan' })
  try {
    const rows = await sql<{ text: string }[]>`
      select a::text as text from audit_log a union all select data::text from events where type = 'audit.entry'`
    const leaks: string[] = []
    for (const { text } of rows) for (const s of seenSecrets) if (text.includes(s)) leaks.push(`${s.slice(0, 12)}… in ${text.slice(0, 200)}`)
    expect({ secretsCollected: seenSecrets.size > 0, entriesScanned: rows.length > 0, leaks }).toEqual({ secretsCollected: true, entriesScanned: true, leaks: [] })
  } finally {
    await sql.end()
  }
})
