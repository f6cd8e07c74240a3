// The worker's ServiceDeps: the same container the API builds (api/http/deps.ts) without the HTTP-only parts, so an
// activity hands a domain service what the service declares and nothing is faked. Built once per worker process.
import { MailDispatcher } from '../api/mail/service'
import type { Config } from '../api/platform/config'
import type { Sql } from '../api/platform/db'
import { deriveKeys } from '../api/platform/deps'
import type { Logger } from '../api/platform/log'
import { TemporalClient } from '../api/platform/temporal'
import type { ActivityDeps } from '../activities'
import { createWorkerMetrics, type WorkerMetrics } from './metrics'

export type WorkerDeps = Omit<ActivityDeps, 'resolve'> & { activityMetrics: WorkerMetrics }

/** close() its `temporal` with the worker; it connects only if an activity starts a workflow. */
export function createWorkerDeps(config: Config, sql: Sql, log: Logger): WorkerDeps {
  const temporal = new TemporalClient(config)
  return {
    config, sql, log, keys: deriveKeys(config.SECRET_KEY), temporal, mail: new MailDispatcher(temporal, config, log.child({ component: 'mail' })),
    activityMetrics: createWorkerMetrics(sql),
  }
}
