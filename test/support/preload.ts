import { afterAll, expect } from 'bun:test'
import { killChildrenOnExit } from '../../scripts/platform'
import { auditLeaks, otherScans, seenSecrets } from './secrets'

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
  const { scanned, leaks } = await auditLeaks(process.env.DATABASE_URL!)
  // Tests on a database of their own (the backup drill) scan it before they drop it, and hand in what they found.
  const all = [{ scanned, leaks }, ...otherScans]
  expect({ entriesScanned: all.some((r) => r.scanned > 0), leaks: all.flatMap((r) => r.leaks) }).toEqual({ entriesScanned: true, leaks: [] })
})
