import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import {
  EdgeInferencePackageDto,
  EdgeInferencePackageRequestDto,
  EdgePackageRunDto,
  EdgePackageRunReportDto,
  ListPackagesQuery,
  ListRunsQuery,
  ModelVersionParams,
  PackageParams,
  PackageSigningKeyDto,
} from './model'
import { createPackage, getPackage, listPackageRuns, listTenantPackages, reportRun } from './service'
import { publicSigningKeys } from './signing'

export const edgePackagesRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ tags: ['Edge inference packages'] })
    .use(http)
    .post(
      '/model-versions/:modelVersionId/edge-inference-package',
      async ({ request, ctx, params, body, set }) => {
        set.status = 201
        return ok(request, await createPackage(deps, ctx, params.modelVersionId, body))
      },
      {
        auth: { project: 'model:write', of: 'resource' },
        idempotent: true,
        errors: ['M400', 'M404', 'M409'],
        params: ModelVersionParams,
        body: EdgeInferencePackageRequestDto,
        response: { 201: envelope(EdgeInferencePackageDto) },
        detail: {
          ...links({ packageId: '$response.body#/data/id' }, [
            'GET /v1/edge-inference-packages/{packageId}',
            'GET /v1/edge-inference-packages/{packageId}/runs',
            'POST /v1/edge-inference-packages/{packageId}/runs',
          ]),
          summary: 'Build a signed edge inference package of a ready model version for an embodiment profile',
          description:
            'Starts one build workflow and answers the queued package. 400 MODEL_VERSION_INVALID_STATUS: the version is not ready; ' +
            '404 MODEL_VERSION_NOT_FOUND: no such version in this tenant (or in none of your projects); 404 NOT_FOUND: no such embodiment ' +
            "profile in your reach; 400 VALIDATION_ERROR: the profile belongs to another project than the version. The package belongs to the version's project; " +
            "the source codes (IMPORTED_CHECKPOINT_*, MODEL_BUNDLE_*, TRAINING_JOB_*) when the version's objects are gone since validation. " +
            'With an Idempotency-Key a repeat replays the same package; without one, every request builds a new package.',
        },
      },
    )
    .get('/edge-inference-packages', async ({ request, ctx, query }) => page(request, await listTenantPackages(deps, ctx, query)), {
      auth: { project: 'model:read', of: 'resource' },
      errors: ['M400p'],
      query: ListPackagesQuery,
      response: { 200: listEnvelope(EdgeInferencePackageDto) },
      detail: {
        summary:
          'Edge inference packages of this tenant you reach, newest first (filter by model version, status and project; a project-scoped token: its project)',
      },
    })
    .get('/edge-inference-packages/signing-keys', ({ request }) => ok(request, publicSigningKeys(deps.config)), {
      public: true,
      errors: ['A400'],
      response: { 200: envelope(PackageSigningKeyDto.array()) },
      detail: { summary: 'The Ed25519 public keys that sign package provenance (DSSE), current first; anyone may verify a package' },
    })
    .get('/edge-inference-packages/:packageId', async ({ request, ctx, params }) => ok(request, await getPackage(deps, ctx, params.packageId)), {
      auth: { project: 'model:read', of: 'resource' },
      errors: ['M400', 'M404'],
      params: PackageParams,
      response: { 200: envelope(EdgeInferencePackageDto) },
      detail: { summary: 'One package: status, progress in bytes, and when ready its artifact with a short-lived download URL' },
    })
    .post(
      '/edge-inference-packages/:packageId/runs',
      async ({ request, ctx, params, body, set }) => {
        set.status = 201
        return ok(request, await reportRun(deps, ctx, params.packageId, body))
      },
      {
        auth: { project: 'model:write', of: 'resource' },
        idempotent: true,
        errors: ['M400', 'M404', 'M409'],
        params: PackageParams,
        body: EdgePackageRunReportDto,
        response: { 201: envelope(EdgePackageRunDto) },
        detail: { summary: 'Report a finished run (the robot-side client, with the token given at launch); publishes run.finished' },
      },
    )
    .get(
      '/edge-inference-packages/:packageId/runs',
      async ({ request, ctx, params, query }) => page(request, await listPackageRuns(deps, ctx, params.packageId, query)),
      {
        auth: { project: 'model:read', of: 'resource' },
        errors: ['M400p', 'M404'],
        params: PackageParams,
        query: ListRunsQuery,
        response: { 200: listEnvelope(EdgePackageRunDto) },
        detail: { summary: "Runs the package's robot-side client reported, newest first" },
      },
    )
