// Activities get their dependencies from this factory rather than module state, so the worker, tests and
// benchmarks can each build a set against their own pool. Only framework-free api/platform code is used.
import type { Config } from '../api/platform/config'
import type { Sql } from '../api/platform/db'
import type { Logger } from '../api/platform/log'
import { housekeepingActivities } from './housekeeping'
import { storageProvisionActivities } from './storage-provision'
import { storageReconcileActivities } from './storage-reconcile'
import { mailActivities } from './mail'

export interface ActivityDeps {
  sql: Sql
  config: Config
  log: Logger
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...housekeepingActivities({ ...deps, log: deps.log.child({ component: 'housekeeping' }) }),
    ...storageProvisionActivities({ ...deps, log: deps.log.child({ component: 'storage' }) }),
    ...storageReconcileActivities({ ...deps, log: deps.log.child({ component: 'storage' }) }),
    ...mailActivities({ ...deps, log: deps.log.child({ component: 'mail' }) }),
  }
}

export type Activities = ReturnType<typeof createActivities>
