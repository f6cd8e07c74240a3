// Starting a version's validation: a quick stat of every object answers the obvious problems at once (a missing
// checkpoint, a bundle without one of its objects, a size other than declared); the workflow then reads every
// object to measure sizes and SHA-256 and turns the version ready or failed.
import type { ServiceDeps } from '../platform/deps'
import { recordAudit } from '../audit/service'
import { watchFor } from '../notifications/service'
import { tenantOf, type RequestContext } from '../identity/context'
import { TENANT_ID, taskQueues } from '../../workflows/contract'
import { ModelsWorkflowType, modelsWorkflowIds, type ValidateModelVersionInput } from '../../workflows/contract-models'
import { assertObjectsPresent, generalBucketOf } from './objects'
import { markValidating, unmarkValidating } from './queries'
import { invalidStatus, ownVersion, toModelVersion, versionTarget } from './service'

/** draft | failed → validating, and the workflow started. MODEL_VERSION_INVALID_STATUS while validating or ready.
 *  Recorded with the status change; a start that then fails puts the status back, and the entry stays (the
 *  validation was started, and ended at once). */
export async function startValidation(deps: Pick<ServiceDeps, 'sql' | 'config' | 'temporal'>, ctx: RequestContext, id: string) {
  const { tenantId } = tenantOf(ctx)
  const { sql, config } = deps
  const row = await ownVersion(sql, ctx, id, 'model:write')
  if (row.status !== 'draft' && row.status !== 'failed') throw invalidStatus(row, 'draft or failed')
  const { regionId, bucket, s3 } = await generalBucketOf(sql, config, tenantId)
  await assertObjectsPresent(s3, bucket, row.source_kind, row.objects)
  const validating = await sql.begin(async (tx) => {
    const marked = await markValidating(tx, tenantId, id, { regionId, bucket })
    if (marked) {
      await recordAudit(tx, ctx, {
        action: 'model_version.validation_started',
        tenantId,
        target: versionTarget(marked),
        details: { previousStatus: row.status, objectCount: row.objects.length },
      })
      await watchFor(tx, `model_version_validation:${id}`, ctx.principal.userId, tenantId)
    }
    return marked
  })
  if (!validating) throw invalidStatus(await ownVersion(sql, ctx, id, 'model:read'), 'draft or failed') // another request started it
  const input: ValidateModelVersionInput = { tenantId, modelVersionId: id }
  try {
    await (await deps.temporal.get()).workflow.start(ModelsWorkflowType.validateModelVersion, {
      workflowId: modelsWorkflowIds.validation(tenantId, id),
      taskQueue: taskQueues(config).models,
      args: [input],
      typedSearchAttributes: [{ key: TENANT_ID, value: tenantId }],
      // The status guard above admits one start per validation. An earlier run of a failed version has recorded its
      // outcome and may only be finishing: replacing it loses nothing.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      workflowIdConflictPolicy: 'TERMINATE_EXISTING',
    })
  } catch (err) {
    // A version no workflow will ever finish must not stay validating: it could never be validated again.
    await unmarkValidating(sql, tenantId, id, row)
    throw err
  }
  return toModelVersion(validating)
}
