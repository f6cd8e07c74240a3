import { afterAll, beforeAll } from 'bun:test'
import { buildApp } from '../../api/app'
import { composeApi, type AppDeps } from '../../api/compose'
import { loadConfig, type Config } from '../../api/platform/config'
import { createDb, type Sql } from '../../api/platform/db'
import { createLogger } from '../../api/platform/log'
import { freePortSync } from '../../scripts/ports'

export interface TestApi {
  url: string
  deps: AppDeps
  sql: Sql
  stop(): Promise<void>
}

/** A real API server on a free port, built from the runner's env plus per-suite overrides
 *  (small rate budgets, say). It is the same app the production entry point serves. */
/** `onQuery` sees every statement's text; `onLog` every log line, debug included, parsed (and nothing is printed). */
export interface ApiProbes {
  onQuery?: (text: string) => void
  onLog?: (line: { level: string; msg: string } & Record<string, unknown>) => void
}

export async function startApi(overrides: Partial<Record<keyof Config, string>> = {}, o: ApiProbes = {}): Promise<TestApi> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', PORT: '0', ...overrides })
  const sql = createDb(config.DATABASE_URL, { max: 20, connectTimeoutSeconds: config.DATABASE_CONNECT_TIMEOUT_SECONDS, onQuery: o.onQuery })
  const log = o.onLog
    ? createLogger('debug', { service: 'api-test' }, (line) => o.onLog!(JSON.parse(line)))
    : createLogger(config.LOG_LEVEL, { service: 'api-test' })
  const deps = composeApi(config, sql, log)
  await deps.credentialFeed.start() // as api/main.ts does: tests exercise the PAT cache replicas really run
  deps.auditSealer.start()
  deps.requestTally.start()
  const app = buildApp(deps).listen({ hostname: '127.0.0.1', port: config.PORT }) // PORT is 0 (any free port) unless overridden
  return {
    url: `http://127.0.0.1:${app.server!.port}`,
    deps,
    sql,
    async stop() {
      await app.stop(true)
      await deps.lastUsed.stop()
      await deps.requestTally.stop()
      await deps.auditSealer.stop()
      await deps.credentialFeed.stop()
      await deps.temporal.close()
      await sql.end({ timeout: 5 })
    },
  }
}

/** One API for the whole test file: started before its first test, stopped after its last. The returned object
 *  is filled in by beforeAll, so read its fields inside tests, not at module level. */
export function useApi(overrides: Partial<Record<keyof Config, string>> = {}, probes: ApiProbes = {}): TestApi {
  const api = {} as TestApi
  beforeAll(async () => {
    Object.assign(api, await startApi(overrides, probes))
  })
  afterAll(async () => {
    await api.stop()
  })
  return api
}

/** A free port and its http://localhost origin: browsers treat localhost as a secure context (WebAuthn), and mailed
 *  links must name a host the browser can open. The port is below the kernel's ephemeral range (`freePortSync`): one
 *  the kernel chose for a moment was taken by another process's outgoing connection before the API bound it. */
export function localhostOrigin(): { port: number; origin: string } {
  const port = freePortSync()
  return { port, origin: `http://localhost:${port}` }
}
