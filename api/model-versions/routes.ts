import { Elysia } from 'elysia'
import type { AppDeps } from '../compose'
import { envelope, listEnvelope, ok, page } from '../http/envelope'
import { links } from '../http/links'
import type { HttpConventions } from '../http/plugin'
import {
  CreateModelVersionBodyDto,
  ListModelVersionsQuery,
  ModelVersionDto,
  ModelVersionParams,
  ObjectUploadDto,
  ObjectUploadQuery,
  UploadUrlsDto,
} from './model'
import { createModelVersion, getModelVersion, listVersions, uploadObject, uploadUrls } from './service'
import { startValidation } from './validation'

const RAW_BODY = Symbol('raw body')

/** Additive (issue 13): model versions, their uploads and their validation. */
export const modelVersionsRoutes = (deps: AppDeps, http: HttpConventions) =>
  new Elysia({ prefix: '/model-versions', tags: ['Models'] })
    .use(http)
    .post(
      '',
      async ({ request, ctx, body, set }) => {
        set.status = 201
        return ok(request, await createModelVersion(deps, ctx, body))
      },
      {
        auth: { project: 'model:write', of: 'resource' },
        idempotent: true,
        errors: ['M400', 'M404', 'M409'],
        body: CreateModelVersionBodyDto,
        response: { 201: envelope(ModelVersionDto) },
        detail: {
          ...links({ modelVersionId: '$response.body#/data/id' }, [
            'GET /v1/model-versions/{modelVersionId}',
            'POST /v1/model-versions/{modelVersionId}/upload-urls',
            'PUT /v1/model-versions/{modelVersionId}/object-content',
            'POST /v1/model-versions/{modelVersionId}/validations',
            'POST /v1/model-versions/{modelVersionId}/edge-inference-package',
          ]),
          summary:
            'Register a model version (status draft) from exactly one source. The source is checked here, nothing is read from ' +
            'storage yet: IMPORTED_CHECKPOINT_INVALID_PATH (a path or bundle key that is empty, absolute, has . or .. segments, //, a ' +
            "backslash, a scheme or a bucket name: anything but a key in the tenant's general bucket), MODEL_BUNDLE_PREFIX_REQUIRED, " +
            'MODEL_BUNDLE_PREFIX_INVALID, MODEL_BUNDLE_OBJECTS_REQUIRED, MODEL_BUNDLE_JOB_NOT_FOUND (404: no such training job in this ' +
            'tenant), TRAINING_JOB_NOT_COMPLETED, TRAINING_JOB_HAS_NO_OUTPUT_ARTIFACT',
        },
      },
    )
    .get('', async ({ request, ctx, query }) => page(request, await listVersions(deps, ctx, query)), {
      auth: { project: 'model:read', of: 'resource' },
      errors: ['M400p'],
      query: ListModelVersionsQuery,
      response: { 200: listEnvelope(ModelVersionDto) },
      detail: {
        summary: 'Model versions of this tenant you reach, newest first, optionally of one status, format and project (a project-scoped token: its project)',
      },
    })
    .get('/:modelVersionId', async ({ request, ctx, params }) => ok(request, await getModelVersion(deps, ctx, params.modelVersionId)), {
      auth: { project: 'model:read', of: 'resource' },
      errors: ['M400', 'M404'],
      params: ModelVersionParams,
      response: { 200: envelope(ModelVersionDto) },
      detail: { summary: 'One model version: status, failure reason, objects (measured sizes and SHA-256 once ready)' },
    })
    .post('/:modelVersionId/upload-urls', async ({ request, ctx, params }) => ok(request, await uploadUrls(deps, ctx, params.modelVersionId)), {
      auth: { project: 'model:write', of: 'resource' },
      errors: ['M400', 'S400', 'M404'],
      params: ModelVersionParams,
      response: { 200: envelope(UploadUrlsDto) },
      detail: {
        summary:
          `Presigned PUT URLs, one per object of a draft version, in the tenant's general bucket; each is valid for ` +
          'MODEL_UPLOAD_URL_TTL_SECONDS (default 900 s = 15 minutes; expiresAt says when). PUT the bytes with no credentials. ' +
          "MODEL_VERSION_INVALID_STATUS once the version left draft; STORAGE_NOT_READY before the tenant's storage is provisioned",
      },
    })
    .put(
      '/:modelVersionId/object-content',
      async ({ request, ctx, params, query }) =>
        ok(request, await uploadObject(deps, ctx, params.modelVersionId, query.key, request.body, request.headers.get('content-length'))),
      {
        auth: { project: 'model:write', of: 'resource' },
        errors: ['M400', 'S400', 'M404'],
        params: ModelVersionParams,
        query: ObjectUploadQuery,
        // The body is the object's bytes, streamed on to storage: this parser runs first and leaves it unread.
        parse: [() => RAW_BODY] as never,
        response: { 200: envelope(ObjectUploadDto) },
        detail: {
          summary:
            'Upload one object of a draft version through the API (the console does): the body is its bytes, streamed to ' +
            "the tenant's general bucket, Content-Length required, at most MODEL_UPLOAD_MAX_BYTES (default 5 GiB) and equal to the " +
            "object's declared sizeBytes when it has one (else IMPORTED_CHECKPOINT_INCOMPLETE). A key that is not one of the version's " +
            'objects is VALIDATION_ERROR; MODEL_VERSION_INVALID_STATUS once the version left draft; STORAGE_NOT_READY before the ' +
            "tenant's storage is provisioned. The presigned URLs (upload-urls) stay the way for clients that reach the storage endpoint",
          requestBody: { required: true, content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
        } as never,
      },
    )
    .post(
      '/:modelVersionId/validations',
      async ({ request, ctx, params, set }) => {
        set.status = 202
        return ok(request, await startValidation(deps, ctx, params.modelVersionId))
      },
      {
        auth: { project: 'model:write', of: 'resource' },
        errors: ['M400', 'S400', 'M404'],
        params: ModelVersionParams,
        response: { 202: envelope(ModelVersionDto) },
        detail: {
          summary:
            "Validate a draft (or failed) version: every object is stat'ed first (IMPORTED_CHECKPOINT_NOT_FOUND, 404: the " +
            'checkpoint or training output is missing; IMPORTED_CHECKPOINT_INCOMPLETE, 400: a bundle object is missing or an object ' +
            'has another size than declared), then the version is validating and a workflow (id model-version-validation/<tenantId>/<id>) ' +
            'streams every object to measure its size and SHA-256, compares them with what was declared and turns the version ready ' +
            'or failed (failureReason names the object), publishing model_version.ready / model_version.failed. ' +
            'MODEL_VERSION_INVALID_STATUS while validating or ready',
        },
      },
    )
