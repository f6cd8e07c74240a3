// What a tenant deletion deletes, in order. Every table with a tenant_id column is either a deletion step or retained
// with its reason, and every bucket kind is a bucket step: test/tenant-deletion/coverage.test.ts reads the live schema
// (information_schema) and the bucket kinds and fails on anything this file does not name, and on an order in which a
// table would be deleted before one that references it.
import { BUCKET_KINDS, type BucketKind } from '../storage/s3'

/** Children before their parents, so no batch ever waits on (or cascades into) a row of a later step. */
export const TABLE_STEPS = [
  'edge_package_runs',
  'edge_packages',
  'model_versions',
  'training_jobs',
  'embodiment_profiles',
  // Only released holds are left by then (an active one blocks the job); they reference projects.
  'legal_holds',
  // Usage events, project memberships and project tokens name projects.
  'usage_events',
  'project_members',
  'api_keys',
  'projects',
  'notification_watches',
  'notifications',
  'invoices',
  'subscriptions',
  'webhook_messages',
  'webhook_endpoints',
  'events',
  'storage_reconciliation_findings',
  'storage_reconciliation_jobs',
  'storage_expected_objects',
  'storage_usage',
  'storage_buckets',
  'audit_exports',
  'tenant_offboarding_requests',
  'tenant_invitations',
  'tenant_domains',
  'sso_connections',
  'tenant_auth_policies',
  'mail_outbox',
  'memberships',
  'membership_counts',
] as const

export type TableStep = (typeof TABLE_STEPS)[number]

/** Tables with a tenant_id column that the deletion keeps, and why. */
export const RETAINED_TABLES: Record<string, string> = {
  audit_log: 'Audit entries outlive the tenant for their own retention period (AUDIT_RETENTION_DAYS); the chain must still verify.',
  audit_inbox: 'Entries on their way into audit_log: the sealer moves them there, where they are retained.',
  tenant_deletion_jobs: 'The job and its signed receipt are the evidence of the deletion.',
  tenant_tombstones: 'Written as the tenant row goes: its id answers TENANT_NOT_FOUND from then on (nothing personal is kept).',
}

/** After the last table the rows phase has one more step: the tenant's audit entries (retained) lose their personal
 *  part, a batch at a time (migrations/0100). */
export const AUDIT_STEP = 'audit_log'
export const ROWS_PHASE_STEPS: readonly string[] = [...TABLE_STEPS, AUDIT_STEP]
export const auditBlankedKey = 'audit:blanked'

/** Buckets are emptied and removed before the rows: storage_buckets names them. */
export const BUCKET_STEPS: readonly BucketKind[] = BUCKET_KINDS

/** Rows per DELETE statement: small enough that one batch holds its locks for milliseconds. */
export const DELETE_BATCH = 1000
/** Keys per S3 multi-object delete: the API's own limit. */
export const OBJECTS_PER_CALL = 1000

export const rowsKey = (table: string) => `table:${table}`
export const objectsKey = (kind: string) => `bucket:${kind}`
