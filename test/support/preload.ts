import { killChildrenOnExit } from '../../scripts/platform'

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
