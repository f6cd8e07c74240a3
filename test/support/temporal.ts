// Tests reach Temporal the way the API does: a plain @temporalio/client connection to the real server the
// runner started. The worker serving the task queues is the runner's `bun worker/main.ts`.
import { Client, Connection } from '@temporalio/client'
import { loadConfig, type Config } from '../../api/platform/config'

export interface TestTemporal {
  client: Client
  config: Config
  close(): Promise<void>
}

export async function connectTemporal(overrides: Partial<Record<keyof Config, string>> = {}): Promise<TestTemporal> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...overrides })
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS })
  return {
    client: new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }),
    config,
    close: () => connection.close(),
  }
}

/** Polls until `probe` returns a value: for eventually consistent reads (visibility, schedule actions)
 *  and for things another process sets up (the worker creating its schedule). */
export async function eventually<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const value = await probe()
      if (value !== undefined) return value
    } catch (err) {
      lastError = err
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`, { cause: lastError })
    await Bun.sleep(100)
  }
}
