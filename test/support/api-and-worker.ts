// An API and an in-process worker on a task-queue prefix of the file's own, with the file's settings (a drill's own
// MinIO region or mail server): the runner's worker never sees the file's workflows. `settings` is read in
// beforeAll, so it may name servers that an earlier beforeAll of the file starts.
import { afterAll, beforeAll } from 'bun:test'
import { loadConfig, type Config } from '../../api/platform/config'
import { startWorker, type RunningWorker } from '../../worker/run'
import { startApi, type TestApi } from './api'

type Settings = Partial<Record<keyof Config, string>>

export function useApiAndWorker(tag: string, settings: () => Settings) {
  const env = {} as { api: TestApi; worker: RunningWorker }
  beforeAll(async () => {
    const overrides = { TEMPORAL_TASK_QUEUE_PREFIX: `rcp-${tag}-${crypto.randomUUID().slice(0, 8)}`, ...settings() }
    env.api = await startApi(overrides)
    const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...overrides })
    // Bundling the workflows takes most of a minute on a loaded machine.
    env.worker = await startWorker(config, { sql: env.api.sql, schedules: false })
  }, 120_000)
  afterAll(async () => {
    await env.worker?.shutdown()
    await env.api?.stop()
  })
  return env
}
