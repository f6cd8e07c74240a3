// The document states checks the server makes outside zod's validation (api/*/model.ts `.meta`), so a generated
// client refuses what the server would. Each statement is read from the served document and held against the
// server's own check on the same samples, so the two cannot drift apart.
import { expect, test } from 'bun:test'
import { parseIdempotencyKey } from '../../api/http/idempotency'
import { expectedVersion, parseIfMatch } from '../../api/platform/etag'
import { deriveKeys } from '../../api/platform/keyring'
import { PAGE_SIZE_MAX, PAGE_TOKEN_SHAPE, openPage, pageTokenFor } from '../../api/platform/pagination'
import { PASSWORD_MIN_LENGTH } from '../../api/identity/passwords'
import { EdgeInferencePackageRequestDto, WIRE_PROTOCOLS } from '../../api/edge-packages/model'
import { targetArchs } from '../../api/edge-packages/image-lines'
import { CreateEmbodimentProfileBodyDto, FEATURE_DTYPES, FEATURE_KINDS, FeatureDto } from '../../api/embodiment-profiles/model'
import { objectKeyProblem } from '../../api/storage/object-keys'
import { HOLD_SCOPE_KINDS } from '../../api/legal-holds/model'
import { UpdateCurrentTenantMembershipBodyDto } from '../../api/memberships/model'
import { TotpRemovalRequestDto } from '../../api/mfa/model'
import { UpdateProjectMemberBodyDto } from '../../api/project-members/model'
import { UpdateSubscriptionBodyDto } from '../../api/billing/model'
import { CreateUserBody } from '../../api/users/model'
import { openapiDocument } from '../../scripts/api-types'
import { newSecretKey } from '../../scripts/env'
import { thrownCode as code } from './support/thrown-code'

type Json = Record<string, any>
const doc = (await openapiDocument()) as unknown as Json
const schemas = doc.components.schemas as Record<string, Json>
const op = (method: string, path: string) => doc.paths[path][method] as Json
const param = (o: Json, name: string) => (o.parameters as Json[]).find((p) => p.name === name) as Json

/** Whether an object matches a oneOf branch of the shapes used here: its required names present, its false ones absent,
 *  its consts equal. */
const matches = (branch: Json, body: Json) =>
  (branch.required ?? []).every((k: string) => k in body) &&
  Object.entries(branch.properties ?? {}).every(([k, s]) => (s === false ? !(k in body) : (s as Json).const === undefined || body[k] === (s as Json).const))

test('Idempotency-Key: the pattern and length the document states are the ones the server enforces', () => {
  const schema = param(op('post', '/v1/projects'), 'Idempotency-Key').schema as Json
  const pattern = new RegExp(schema.pattern)
  const accepts = (key: string) => {
    try {
      return parseIdempotencyKey(key) === key
    } catch {
      return false
    }
  }
  for (const key of ['4f1c6c1e-8b7e-4c1a-9a57-0a7c4e0f5f1b', 'a', '~!#', 'a b', 'é', '\t', 'x'.repeat(255), 'x'.repeat(256)]) {
    const stated = pattern.test(key) && key.length >= schema.minLength && key.length <= schema.maxLength
    expect({ key, stated }).toEqual({ key, stated: accepts(key) })
  }
})

test('POST /v1/users: exactly one stated variant fits each body the server takes, and none fits one it refuses', () => {
  const body = schemas.CreateUserBodyDto as Json
  expect(body.properties.password.minLength).toBe(PASSWORD_MIN_LENGTH)
  const email = 'someone@example.com'
  const samples: Json[] = [
    { email, password: 'correct horse battery' },
    { email, mode: 'invite', role: 'viewer' },
    { email, mode: 'create', role: 'admin', displayName: 'Ada' },
    { email, password: 'correct horse battery', mode: 'invite' },
    { email, password: 'correct horse battery', role: 'viewer' },
    { email },
    { email, mode: 'invite' },
    { email, displayName: 'Ada' },
  ]
  for (const sample of samples) {
    const fitting = (body.oneOf as Json[]).filter((b) => matches(b, sample)).length
    expect({ sample, fitting }).toEqual({ sample, fitting: CreateUserBody.safeParse(sample).success ? 1 : 0 })
  }
})

test('a legal hold names its scope, one of the kinds the service knows, each with the id it needs', () => {
  const body = schemas.CreateLegalHoldBodyDto as Json
  expect(body.required).toContain('scope')
  const variants = body.properties.scope.oneOf as Json[]
  expect(variants.map((v) => v.properties.kind.const)).toEqual([...HOLD_SCOPE_KINDS])
  expect(variants.map((v) => v.required)).toEqual([['kind'], ['kind', 'userId'], ['kind', 'projectId']])
})

test('the audit and usage windows are stated: from and to, RFC 3339, both required', () => {
  for (const o of [op('get', '/v1/tenants/current/audit-log'), op('get', '/v1/tenants/current/usage-summary')])
    for (const name of ['from', 'to'])
      expect({ name, required: param(o, name).required, format: param(o, name).schema.format }).toEqual({ name, required: true, format: 'date-time' })
  expect(schemas.AuditTimeRangeBodyDto?.required).toEqual(['from', 'to'])
  expect(param(op('get', '/v1/tenants/current/usage-summary'), 'scope').schema.enum).toEqual(['tenant', 'project', 'meter'])
})

test('a change that names no field is refused by the server and by the document alike', () => {
  for (const [name, model] of [
    ['UpdateCurrentTenantMembershipBodyDto', UpdateCurrentTenantMembershipBodyDto],
    ['UpdateProjectMemberBodyDto', UpdateProjectMemberBodyDto],
    ['UpdateSubscriptionBodyDto', UpdateSubscriptionBodyDto],
  ] as const) {
    expect({ name, minProperties: schemas[name]?.minProperties }).toEqual({ name, minProperties: 1 })
    expect(model.safeParse({}).success).toBe(false)
  }
})

test('a completion pairs reason with failed and the artifact with completed', () => {
  const variants = schemas.CompleteTrainingJobBodyDto?.oneOf as Json[]
  expect(variants.filter((v) => matches(v, { status: 'completed', outputArtifactPath: 'runs/1/model.onnx' }))).toHaveLength(1)
  expect(variants.filter((v) => matches(v, { status: 'failed', reason: 'diverged' }))).toHaveLength(1)
  expect(variants.filter((v) => matches(v, { status: 'failed', outputArtifactPath: 'runs/1/model.onnx' }))).toHaveLength(0)
  expect(variants.filter((v) => matches(v, { status: 'completed', reason: 'done' }))).toHaveLength(0)
})

test('PATCH /v1/tenants/current/subscription: If-Match is stated as required, with the one ETag shape the server takes', () => {
  const header = param(op('patch', '/v1/tenants/current/subscription'), 'If-Match')
  expect(header.required).toBe(true)
  const pattern = new RegExp(header.schema.pattern)
  // The server takes one strong tag of a version; `*` (any version) is refused here, as a change needs the one read.
  const takes = (value: string) => {
    try {
      return expectedVersion(parseIfMatch(value)) !== null
    } catch {
      return false
    }
  }
  for (const value of ['"v1"', '"v42"', '"v1234567890123456"', '"v12345678901234567"', '*', 'W/"v1"', '"v0"', 'v1', '"v1", "v2"', '"x"']) {
    expect({ value, stated: pattern.test(value) }).toEqual({ value, stated: takes(value) })
  }
})

test('GET /v1/registration-invitations/validation: the token is stated as required and non-empty, as the server refuses it otherwise', () => {
  const token = param(op('get', '/v1/registration-invitations/validation'), 'token')
  expect({ required: token.required, minLength: token.schema.minLength }).toEqual({ required: true, minLength: 1 })
})

test('an edge package request: exactly one stated mode variant fits each body the server takes, and none fits one it refuses', () => {
  const body = schemas.EdgeInferencePackageRequestDto as Json
  const base = { embodimentProfileId: '4f1c6c1e-8b7e-4c1a-9a57-0a7c4e0f5f1b' }
  const samples: Json[] = [
    { ...base, mode: 'local' },
    { ...base, mode: 'local', remotePolicyHost: 'policy.lab', remotePolicyPort: 8000 },
    { ...base, mode: 'remote_ws', remotePolicyHost: 'policy.lab', remotePolicyPort: 8000 },
    { ...base, mode: 'remote_ws', remotePolicyHost: 'policy.lab' },
    { ...base, mode: 'remote_ws', remotePolicyPort: 8000 },
    { ...base, mode: 'remote_ws' },
  ]
  for (const sample of samples) {
    const fitting = (body.oneOf as Json[]).filter((b) => matches(b, sample)).length
    expect({ sample, fitting }).toEqual({ sample, fitting: EdgeInferencePackageRequestDto.safeParse(sample).success ? 1 : 0 })
  }
})

test('every list states the pageSize maximum and the page token shape the server enforces', () => {
  const keys = deriveKeys(newSecretKey())
  const binding = { route: 'GET /v1/things', scope: 'tenant:t', filters: {} }
  const issued = pageTokenFor(keys, binding, { id: 'x' })
  const refusal = (size: number | undefined, token: string | undefined) => code(() => openPage(keys, binding, size, token)) ?? null
  let lists = 0
  for (const item of Object.values(doc.paths as Record<string, Json>)) {
    for (const o of Object.values(item)) {
      const size = (o.parameters as Json[] | undefined)?.find((p) => p.name === 'pageSize')
      if (!size) continue
      lists++
      const token = param(o, 'pageToken').schema as Json
      expect({ maximum: size.schema.maximum, pattern: token.pattern }).toEqual({ maximum: PAGE_SIZE_MAX, pattern: PAGE_TOKEN_SHAPE.source })
    }
  }
  expect(lists).toBeGreaterThan(10)
  expect([refusal(PAGE_SIZE_MAX, undefined), refusal(PAGE_SIZE_MAX + 1, undefined)]).toEqual([null, 'PAGE_SIZE_TOO_LARGE'])
  // An issued token has the stated shape and is taken; one the shape refuses is refused by the server too.
  expect(PAGE_TOKEN_SHAPE.test(issued)).toBe(true)
  expect(refusal(1, issued)).toBeNull()
  for (const bad of [`${issued}=`, `${issued}.x`, issued.replace('.', '..'), `+${issued}`]) {
    expect({ bad, stated: PAGE_TOKEN_SHAPE.test(bad), server: refusal(1, bad) }).toEqual({ bad, stated: false, server: 'PAGE_TOKEN_INVALID' })
  }
})

test('an image feature: the stated if/then takes exactly the features the server takes', () => {
  const schema = schemas.EmbodimentFeatureDto as Json
  const [cond, then] = [schema.if as Json, schema.then as Json]
  expect(cond.required).toEqual(['kind'])
  // What the stated if/then and the rest of the feature schema say of a sample (the shapes used here are within its bounds).
  const stated = (f: Json) =>
    f.kind !== cond.properties.kind.const ||
    (f.dtype === then.properties.dtype.const && f.shape.length >= then.properties.shape.minItems && f.shape.length <= then.properties.shape.maxItems)
  let samples = 0
  for (const kind of [undefined, ...FEATURE_KINDS])
    for (const dtype of FEATURE_DTYPES)
      for (const shape of [[3], [480, 640], [480, 640, 3], [2, 480, 640, 3]]) {
        const f = { name: 'observation.images.top', dtype, shape, ...(kind ? { kind } : {}) }
        expect({ f, stated: stated(f) }).toEqual({ f, stated: FeatureDto.safeParse(f).success })
        samples++
      }
  expect(samples).toBe(4 * FEATURE_DTYPES.length * 4)
})

test('feature names: uniqueness within a list is said in the description (JSON Schema cannot say unique by a property), and refused', () => {
  expect((schemas.EmbodimentFeatureDto as Json).properties.name.description).toContain('Unique within its list')
  const feature = { name: 'state', dtype: 'float32', shape: [14] }
  const body = (features: Json[]) => ({ name: 'p', robotType: 'aloha', controlRateHz: 50, observationFeatures: features, actionFeatures: [feature] })
  expect(CreateEmbodimentProfileBodyDto.safeParse(body([feature, { ...feature, name: 'state2' }])).success).toBe(true)
  expect(CreateEmbodimentProfileBodyDto.safeParse(body([feature, feature])).success).toBe(false)
})

test('an edge package request: lerobot-grpc is stated to need an image line with LeRobot, as the server refuses it otherwise', () => {
  const body = schemas.EdgeInferencePackageRequestDto as Json
  const [cond, then] = [body.if as Json, body.then as Json]
  const lerobot = cond.properties.wireProtocols.contains.const
  const stated = (b: Json) =>
    !(b.wireProtocols ?? []).includes(lerobot) || (b.targetArch !== undefined && then.properties.targetArch.enum.includes(b.targetArch))
  const base = { embodimentProfileId: '4f1c6c1e-8b7e-4c1a-9a57-0a7c4e0f5f1b', mode: 'remote_ws', remotePolicyHost: 'policy.lab', remotePolicyPort: 8000 }
  const lists = [undefined, ['openpi-ws'], ['lerobot-grpc'], [...WIRE_PROTOCOLS]]
  for (const wireProtocols of lists)
    for (const targetArch of [undefined, ...targetArchs]) {
      const b = { ...base, ...(wireProtocols ? { wireProtocols } : {}), ...(targetArch ? { targetArch } : {}) }
      expect({ b, stated: stated(b) }).toEqual({ b, stated: EdgeInferencePackageRequestDto.safeParse(b).success })
    }
})

test("object keys (checkpoint paths, bundle keys and prefixes, training outputs): the stated pattern is the service's objectKeyProblem", () => {
  const path = (schemas.ImportedCheckpointSourceDto as Json).properties.path
  const key = new RegExp(path.pattern)
  const prefix = new RegExp((schemas.ModelBundleSourceDto as Json).properties.prefix.pattern)
  expect((schemas.BundleObjectDto as Json).properties.key.pattern).toBe(path.pattern)
  expect((schemas.CompleteTrainingJobBodyDto as Json).properties.outputArtifactPath.pattern).toBe(path.pattern)
  const bucket = `rcp-${'0a'.repeat(10)}-general`
  const samples = [
    ...['m.onnx', 'runs/1/model.onnx', 'a', 'é/ü', 'a.b/..c/d..', '...', 'a/...', '.hidden', 'x/.y', 'rcp-x/m', `${bucket}x/m`, `x/${bucket}/m`],
    ...['', '/a', 'a/', 'a//b', 'a\\b', 'a\nb', 'a\u007fb', '\u0000', 's3://b/k', 'http:x', 'C:/x', 'a:b', '1a:b', '.', '..', './a', '../a'],
    ...['a/.', 'a/..', 'a/./b', 'a/../b', `${bucket}/m`, bucket, 'a\u2028/../b', 'a/\u2028..', 'x'.repeat(1024), 'x'.repeat(1025)],
  ]
  // And random keys from the pieces the rules are about, so no rule is left to the hand-picked ones.
  let seed = 7
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
  const pieces = ['a', 'b1', '/', '.', '..', '\\', ':', 's3', bucket, '\n', '\u2028', 'é', '-', '+']
  for (let i = 0; i < 4000; i++) samples.push(Array.from({ length: 1 + (next() % 6) }, () => pieces[next() % pieces.length]).join(''))
  const withinLength = (s: string) => s.length <= path.maxLength
  for (const s of samples) {
    // Byte length is the server's alone (maxLength counts characters); every sample here is within both or neither.
    if (Buffer.byteLength(s) !== s.length && Buffer.byteLength(s) > 1024) continue
    expect({ s, key: key.test(s) && withinLength(s), prefix: prefix.test(s) && withinLength(s) }).toEqual({
      s,
      key: objectKeyProblem(s) === null,
      prefix: objectKeyProblem(s, { prefix: true }) === null,
    })
  }
})

test('DELETE /v1/users/me/mfa/totp: the body is stated as optional (the model or null), as the server takes either', () => {
  const body = op('delete', '/v1/users/me/mfa/totp').requestBody as Json
  expect(body.required).toBe(false)
  expect(body.content['application/json'].schema.anyOf).toEqual([{ $ref: '#/components/schemas/TotpRemovalRequestDto' }, { type: 'null' }])
  expect(TotpRemovalRequestDto.nullish().safeParse(undefined).success && TotpRemovalRequestDto.nullish().safeParse(null).success).toBe(true)
})
