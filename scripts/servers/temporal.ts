// Temporal: the CLI's dev server (SQLite, UI included).
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { httpOk, spawnChild, waitUntil, type Child } from '../supervisor'
import { serverBinaries } from './binaries'

export interface TemporalServer {
  address: string
  namespace: string
  uiUrl: string
  child: Child
  stop(): Promise<void>
}

export interface TemporalOptions {
  /** Omitted: the dev server keeps its state in memory, gone when it stops. */
  dbFile?: string
  port: number
  uiPort: number
  httpPort: number
  /** Omitted: the dev server picks a random free port. */
  metricsPort?: number
  logFile: string
  /** Tests: the state is thrown away, so stop() kills at once instead of a ~2 s graceful shutdown. */
  ephemeral?: boolean
}

export async function startTemporal(opts: TemporalOptions): Promise<TemporalServer> {
  const { temporal } = await serverBinaries()
  if (opts.dbFile) mkdirSync(dirname(opts.dbFile), { recursive: true })
  // Client-side TEMPORAL_* settings in the caller's env must not reconfigure the server.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TEMPORAL_')))
  const child = spawnChild('temporal', {
    cmd: [
      temporal,
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      ...(opts.dbFile ? ['--db-filename', opts.dbFile] : []),
      '--port',
      String(opts.port),
      '--ui-port',
      String(opts.uiPort),
      '--http-port',
      String(opts.httpPort),
      ...(opts.metricsPort ? ['--metrics-port', String(opts.metricsPort)] : []),
      '--namespace',
      'default',
      '--search-attribute',
      'TenantId=Keyword',
      '--log-level',
      'warn',
      '--color',
      'never',
    ],
    env,
    logFile: opts.logFile,
    stopSignal: opts.ephemeral ? 'SIGKILL' : 'SIGTERM',
  })
  // The HTTP API answers for the namespace only once the frontend serves it and the namespace exists.
  await waitUntil(child, 'the default namespace', httpOk(`http://127.0.0.1:${opts.httpPort}/api/v1/namespaces/default`))
  return { address: `127.0.0.1:${opts.port}`, namespace: 'default', uiUrl: `http://127.0.0.1:${opts.uiPort}`, child, stop: () => child.stop() }
}
