import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { databaseAnswers } from './queries'

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })

async function probe(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs))
  return Promise.race([check().catch(() => false), timeout])
}

/** /healthz: the process answers. /readyz: its dependencies answer too (load balancers route on this), and whether
 *  its PAT cache is in use. */
export const healthRoutes = (deps: AppDeps) =>
  new Elysia()
    .get('/healthz', () => json(200, { status: 'ok' }), { detail: { hide: true } })
    .get(
      '/readyz',
      async () => {
        const checks: Record<string, () => Promise<boolean>> = {
          postgres: () => databaseAnswers(deps.sql),
          ...deps.probes,
        }
        const results = Object.fromEntries(await Promise.all(Object.entries(checks).map(async ([k, f]) => [k, await probe(f, 2000)] as const)))
        const ready = Object.values(results).every(Boolean)
        // Information, not a check: without a live feed this replica reads every PAT from Postgres (slower, still right).
        const credentialCache = { live: deps.pats.live, entries: deps.pats.size }
        return json(ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', checks: results, credentialCache })
      },
      { detail: { hide: true } },
    )
