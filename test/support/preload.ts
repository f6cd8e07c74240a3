import { afterAll, expect } from 'bun:test'
import { killChildrenOnExit } from '../../scripts/platform'
import { auditLeaks, otherScans, unsearchedSecrets } from './secrets'

// Tests talk to real servers that scripts/test.ts starts; running `bun test` alone would only produce
// confusing connection errors, so say what to run instead. The fast tier (test/unit, `./scripts/test --fast`) needs
// none: its files import no server helper (test/unit/tier.test.ts holds them to it).
const fastTier = process.env.RCP_TEST_TIER === 'fast'
for (const name of ['DATABASE_URL', 'SECRET_KEY', 'TEMPORAL_ADDRESS']) {
  if (!fastTier && !process.env[name]) {
    console.error(`\n${name} is not set: run the suite with ./scripts/test (it starts Postgres, Temporal, MinIO and the mail catcher)\n`)
    process.exit(2)
  }
}

// Servers and processes a test starts (spawnChild) run in their own process groups: killed with this process.
killChildrenOnExit()

// After each test file's last test: no secret its flows created or sent (test/support/secrets.ts) is in any audit
// entry or any audit.entry event of the run, whichever test wrote it. A test worker runs its files one after another
// in one global (scripts/test.ts), so this hook runs at the end of every file and looks for what was seen since.
afterAll(async () => {
  const fresh = unsearchedSecrets()
  // Tests on a database of their own (the backup drill) scan it before they drop it, and hand in what they found.
  const others = otherScans.splice(0)
  if (fresh.length === 0 && others.length === 0) return
  const all = [...(fresh.length > 0 ? [await auditLeaks(process.env.DATABASE_URL!, fresh)] : []), ...others]
  expect({ entriesScanned: all.some((r) => r.scanned > 0), leaks: all.flatMap((r) => r.leaks) }).toEqual({ entriesScanned: true, leaks: [] })
})
