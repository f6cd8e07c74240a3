// Activities get their dependencies from this factory rather than module state, so the worker, tests and
// benchmarks can each build a set against their own pool. Only framework-free api/platform code is used.
import { housekeepingActivities } from './housekeeping'
import { storageProvisionActivities } from './storage-provision'
import { storageReconcileActivities } from './storage-reconcile'
import { mailActivities } from './mail'
import { modelValidationActivities } from './model-validation'
import { edgePackageActivities } from './edge-package/activities'
import { webhookDeliveryActivities } from './webhook-delivery'
import { auditExportActivities } from './audit-export'
import { resealActivities } from './reseal'
import { billingActivities } from './billing'
import { usageStorageActivities } from './usage-storage'
import type { ActivityDeps } from './deps'

export type { ActivityDeps }

const withComponent = (deps: ActivityDeps, component: string): ActivityDeps => ({ ...deps, log: deps.log.child({ component }) })

/** The activities by concern. Each task queue registers only the sets its workflows call (worker/queues.ts). */
export const activitySets = {
  housekeeping: (deps: ActivityDeps) => ({
    ...housekeepingActivities(withComponent(deps, 'housekeeping')),
    ...usageStorageActivities(withComponent(deps, 'usage')),
  }),
  storage: (deps: ActivityDeps) => ({
    ...storageProvisionActivities(withComponent(deps, 'storage')),
    ...storageReconcileActivities(withComponent(deps, 'storage')),
  }),
  mail: (deps: ActivityDeps) => mailActivities(withComponent(deps, 'mail')),
  models: (deps: ActivityDeps) => modelValidationActivities(withComponent(deps, 'models')),
  packages: (deps: ActivityDeps) => edgePackageActivities(withComponent(deps, 'edge-packages')),
  webhooks: (deps: ActivityDeps) => webhookDeliveryActivities(withComponent(deps, 'webhooks')),
  audit: (deps: ActivityDeps) => auditExportActivities(withComponent(deps, 'audit')),
  keys: (deps: ActivityDeps) => resealActivities(withComponent(deps, 'keys')),
  billing: (deps: ActivityDeps) => billingActivities(withComponent(deps, 'billing')),
}

/** Every activity in one set, for a test or benchmark to call. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...activitySets.housekeeping(deps),
    ...activitySets.storage(deps),
    ...activitySets.mail(deps),
    ...activitySets.models(deps),
    ...activitySets.packages(deps),
    ...activitySets.webhooks(deps),
    ...activitySets.audit(deps),
    ...activitySets.keys(deps),
    ...activitySets.billing(deps),
  }
}

/** Every activity's signature: the one type the workflows proxy (`import type { Activities }`), so no workflow
 *  declares its own. */
export type Activities = ReturnType<typeof createActivities>
