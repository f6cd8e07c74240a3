// The API as the benchmarks run it: the production process (api/main.ts startApi), its app built as in production,
// plus the baselines of bench/baselines.ts. bench/harness.ts starts this file where production starts api/main.ts.
import { buildApp } from '../api/app'
import { startApi } from '../api/main'
import { withBaselines } from './baselines'

await startApi((deps) => withBaselines(buildApp(deps)))
