// Edge inference packages: the published create operation, the package page and its runs. The build itself is
// the workflow's (workflows/edge-package.ts, activities/edge-package/).
import { randomUUID } from 'node:crypto'
import { publishEvent } from '../events/service'
import { recordAudit } from '../audit/service'
import { watchFor } from '../notifications/service'
import { tenantOf, type RequestContext } from '../identity/context'
import { assertSourceStillPresent } from '../model-versions/objects'
import { findEmbodimentProfile } from '../embodiment-profiles/queries'
import { ownVersion } from '../model-versions/service'
import type { Permission } from '../identity/permissions'
import { listReach, reachResource, sameProjectOrTenantWide } from '../project-members/reach'
import type { ServiceDeps } from '../platform/deps'
import { ApiError } from '../platform/errors'
import { isUuid } from '../platform/ids'
import { createdCursorOf } from '../platform/keyset'
import { mapPage, paginate, type PageParams } from '../platform/pagination'
import { TENANT_ID, taskQueues } from '../../workflows/contract'
import { edgePackageWorkflowId, EdgePackageWorkflowType, type BuildEdgePackageInput } from '../../workflows/contract-edge-packages'
import type { RunReport } from './manifest'
import { LOCAL_SERVER_PROTOCOL, type PackageRequestInput } from './model'
import { findPackage, insertPackage, insertRun, listPackages, listRuns, markFailed, type PackageStatus } from './queries'
import { packageViews, toRunDto } from './views'

type Deps = Pick<ServiceDeps, 'sql' | 'config' | 'temporal'>

const notFound = (id: string) => new ApiError('NOT_FOUND', `No edge inference package ${id} in this tenant`)
const fkViolated = (err: unknown) => {
  const e = err as { code?: string; constraint_name?: string }
  return e?.code === '23503' ? e.constraint_name : undefined
}

const packageTarget = (id: string) => ({ type: 'edge_package', id })

/** Recorded with the package row (a replayed Idempotency-Key answers from the stored response and never gets here). */
export async function createPackage(deps: Deps, ctx: RequestContext, modelVersionId: string, input: PackageRequestInput) {
  const { tenantId } = tenantOf(ctx)
  // A package belongs to its version's project: whoever may write there may build it, and it is seen there.
  const version = await ownVersion(deps.sql, ctx, modelVersionId, 'model:write')
  const projectId = version.project_id
  await profileFor(deps, ctx, input.embodimentProfileId, projectId)
  if (version.status !== 'ready') {
    throw new ApiError('MODEL_VERSION_INVALID_STATUS', `Model version ${modelVersionId} is ${version.status}; only a ready version can be packaged`)
  }
  const served = LOCAL_SERVER_PROTOCOL[version.format]
  if (input.mode === 'local' && !input.wireProtocols.includes(served)) {
    const message = `a local ${version.format} model is served over ${served}: include it in wireProtocols`
    throw new ApiError('VALIDATION_ERROR', message, { errors: [{ path: 'body.wireProtocols', message }] })
  }
  await assertSourceStillPresent(deps, tenantId, version)

  const id = randomUUID()
  const workflowId = edgePackageWorkflowId(tenantId, id, input.targetArch)
  const row = await deps.sql
    .begin(async (tx) => {
      const made = await insertPackage(tx, {
        id,
        tenantId,
        projectId,
        modelVersionId,
        embodimentProfileId: input.embodimentProfileId,
        workflowId,
        request: {
          mode: input.mode,
          strategyKey: input.strategyKey ?? null,
          steps: input.steps,
          targetArch: input.targetArch,
          // The remote policy only means something for remote_ws; a local package never points elsewhere.
          remotePolicyHost: input.mode === 'remote_ws' ? input.remotePolicyHost! : null,
          remotePolicyPort: input.mode === 'remote_ws' ? input.remotePolicyPort! : null,
          wireProtocols: input.wireProtocols,
          useFakeTransport: input.useFakeTransport,
        },
      })
      await recordAudit(tx, ctx, {
        action: 'edge_package.created',
        tenantId,
        target: packageTarget(id),
        details: { modelVersionId, embodimentProfileId: input.embodimentProfileId, mode: input.mode, targetArch: input.targetArch, projectId },
      })
      await watchFor(tx, `edge_package:${id}`, ctx.principal.userId, tenantId)
      return made
    })
    .catch((err) => {
      // The tenant-scoped foreign key is the profile check: absent, or another tenant's, is the same 404. It cannot
      // race with the profile's deletion, which the same key refuses once this row exists.
      if (fkViolated(err) === 'edge_packages_embodiment_profile_fk')
        throw new ApiError('NOT_FOUND', `No embodiment profile ${input.embodimentProfileId} in this tenant`)
      if (fkViolated(err) === 'edge_packages_model_version_fk')
        throw new ApiError('MODEL_VERSION_NOT_FOUND', `Model version ${modelVersionId} was just deleted`)
      throw err
    })
  const args: [BuildEdgePackageInput] = [{ tenantId, packageId: id }]
  try {
    await (await deps.temporal.get()).workflow.start(EdgePackageWorkflowType.build, {
      workflowId,
      taskQueue: taskQueues(deps.config).packages,
      args,
      typedSearchAttributes: [{ key: TENANT_ID, value: tenantId }],
      memo: { modelVersionId, embodimentProfileId: input.embodimentProfileId, targetArch: input.targetArch },
    })
  } catch (err) {
    // A package no workflow will ever build must not stay queued.
    await markFailed(deps.sql, tenantId, id, 'The build could not be started')
    throw err
  }
  return packageViews(deps, tenantId)(row)
}

const profileNotFound = (id: string) => () => new ApiError('NOT_FOUND', `No embodiment profile ${id} in this tenant`)

/** The profile a package is built for: one the caller reaches (else 404, as an absent one), tenant-wide or of the
 *  package's own project (else 400: a package never draws on another project's work). */
async function profileFor({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, profileId: string, projectId: string | null) {
  const profile = isUuid(profileId) ? await findEmbodimentProfile(sql, tenantOf(ctx).tenantId, profileId) : undefined
  if (!profile) throw profileNotFound(profileId)()
  await reachResource(sql, ctx, profile.project_id, 'model:read', profileNotFound(profileId))
  if (!sameProjectOrTenantWide(profile.project_id, projectId)) {
    const message = `the embodiment profile belongs to project ${profile.project_id}; the model version to ${projectId ?? 'the whole tenant'}`
    throw new ApiError('VALIDATION_ERROR', message, { errors: [{ path: 'body.embodimentProfileId', message }] })
  }
}

/** A package of the caller's tenant that the caller reaches with `point`; another project's is as absent as another
 *  tenant's (NOT_FOUND). */
async function ownPackage({ sql }: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, id: string, point: Permission) {
  const row = isUuid(id) ? await findPackage(sql, tenantOf(ctx).tenantId, id) : undefined
  if (!row) throw notFound(id)
  await reachResource(sql, ctx, row.project_id, point, () => notFound(id))
  return row
}

export async function getPackage(deps: Pick<ServiceDeps, 'sql' | 'config'>, ctx: RequestContext, id: string) {
  const { tenantId } = tenantOf(ctx)
  return packageViews(deps, tenantId)(await ownPackage(deps, ctx, id, 'model:read'))
}

export async function listTenantPackages(
  deps: Pick<ServiceDeps, 'sql' | 'config' | 'keys'>,
  ctx: RequestContext,
  q: PageParams & { modelVersionId?: string; status?: PackageStatus; projectId?: string },
) {
  const { tenantId } = tenantOf(ctx)
  const reach = await listReach(deps.sql, ctx, 'model:read', q.projectId)
  const filters = { modelVersionId: q.modelVersionId, status: q.status, projectId: q.projectId }
  const binding = { route: 'GET /edge-inference-packages', scope: `tenant:${tenantId}`, filters }
  const p = await paginate(deps.keys, binding, q, (after, limit) => listPackages(deps.sql, tenantId, reach, q, after, limit), createdCursorOf)
  const items = await Promise.all(p.items.map(packageViews(deps, tenantId)))
  return { ...p, items }
}

/** The robot-side client's report; its event and audit entry are written in the same transaction, so a stored run
 *  is announced and recorded once. */
export async function reportRun(deps: Pick<ServiceDeps, 'sql'>, ctx: RequestContext, packageId: string, report: RunReport) {
  const { tenantId } = tenantOf(ctx)
  const pkg = await ownPackage(deps, ctx, packageId, 'model:write')
  const run = await deps.sql.begin(async (tx) => {
    const row = await insertRun(tx, tenantId, packageId, ctx.principal.userId, report)
    await publishEvent(tx, tenantId, 'run.finished', {
      packageId,
      runId: row.id,
      stepsDone: row.steps_done,
      exitReason: row.exit_reason,
      contractViolations: row.contract_violations,
      latencyMs: report.latencyMs,
      projectId: pkg.project_id,
    })
    await recordAudit(tx, ctx, {
      action: 'edge_package.run_reported',
      tenantId,
      target: packageTarget(packageId),
      details: { runId: row.id, stepsDone: row.steps_done, exitReason: row.exit_reason },
    })
    return row
  })
  return toRunDto(run)
}

export async function listPackageRuns({ sql, keys }: Pick<ServiceDeps, 'sql' | 'keys'>, ctx: RequestContext, packageId: string, q: PageParams) {
  const { tenantId } = tenantOf(ctx)
  await ownPackage({ sql }, ctx, packageId, 'model:read')
  const binding = { route: 'GET /edge-inference-packages/{id}/runs', scope: `tenant:${tenantId}`, filters: { packageId } }
  return mapPage(await paginate(keys, binding, q, (after, limit) => listRuns(sql, tenantId, packageId, after, limit), createdCursorOf), toRunDto)
}
