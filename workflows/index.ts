// The worker's workflowsPath: every workflow the worker runs is exported here, by its WorkflowType name.
export { housekeepingWorkflow, sampleStorageUsageWorkflow } from './housekeeping'
export { mailSweepWorkflow, sendMailWorkflow } from './mail'
export { provisionStorageWorkflow, reconcileStorageWorkflow } from './storage'
export { validateModelVersionWorkflow } from './models'
export { buildEdgePackageWorkflow } from './edge-package'
export { deliverWebhookWorkflow } from './webhooks'
export { exportAuditLogWorkflow } from './audit-export'
export { resealSecretsWorkflow } from './reseal'
