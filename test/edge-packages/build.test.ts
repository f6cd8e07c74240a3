// A package built end to end by the runner's worker: downloaded through its URL, every SHA256SUMS line checked with
// sha256sum, the DSSE signature verified with openssl over the pre-authentication encoding, the archive's
// determinism (a rebuild from the same plan is byte-identical; a second package differs only by its id), its events,
// and the runs a robot reports.
import { describe, expect, test } from 'bun:test'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeArchive } from '../../activities/edge-package/archive'
import { planEdgePackage } from '../../activities/edge-package/plan'
import { runtimeFilesFor } from '../../activities/edge-package/runtime'
import { dssePae, signingPrivateKey } from '../../api/edge-packages/signing'
import { createLogger } from '../../api/platform/log'
import type { EdgePackagePlan } from '../../workflows/contract-edge-packages'
import { useApiAndTemporal, localS3 } from '../storage/helpers'
import { makeProfile, makeVersion, modelTenant, packageIn } from './helpers'

const env = useApiAndTemporal()
/** The paragraph of docs/robots.md that begins with `lead`: the statements about the archive a test holds it to. */
const readmeParagraph = (lead: string) => {
  const text = readFileSync(join(import.meta.dir, '..', '..', 'docs', 'robots.md'), 'utf8')
  const at = text.indexOf(lead)
  if (at < 0) throw new Error(`docs/robots.md has no paragraph beginning ${lead}`)
  return text.slice(at, text.indexOf('\n\n', at)).replaceAll('\n', ' ')
}
const backticked = (s: string) => [...s.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)
/** Every file under `root`, relative, sorted. */
const filesUnder = (root: string) => sh('find', ['.', '-type', 'f', '-printf', '%P\n'], root).trim().split('\n').sort()

const scratch = () => mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'edge-pkg-'))
const sh = (cmd: string, args: string[], cwd?: string) => execFileSync(cmd, args, { cwd, encoding: 'utf8' })

const FILES = { 'policy.onnx': Buffer.from('not really onnx, but bytes all the same'), 'config/norm.json': Buffer.from('{"mean":[0,0]}') }
const REQUEST = { mode: 'remote_ws', remotePolicyHost: 'policy.internal', remotePolicyPort: 8000, steps: 5, useFakeTransport: true }

async function readyPackage() {
  const t = await modelTenant(env.api.url)
  const profileId = await makeProfile(env.api.sql, t.tenantId)
  const version = await makeVersion(env.api.sql, t.tenantId, t.general, FILES)
  const res = await t.models.post(`/model-versions/${version.id}/edge-inference-package`, { ...REQUEST, embodimentProfileId: profileId })
  expect(res.status).toBe(201)
  const pkg = await packageIn(t.models, res.json.data.id, ['ready', 'failed'])
  expect(pkg.failureReason).toBeNull()
  return { t, profileId, version, created: res.json.data, pkg }
}

async function download(url: string) {
  const dir = scratch()
  const bytes = Buffer.from(await (await fetch(url)).arrayBuffer())
  writeFileSync(join(dir, 'package.tar.gz'), bytes)
  sh('mkdir', ['x'], dir)
  sh('tar', ['-xzf', 'package.tar.gz', '-C', 'x'], dir)
  return { dir, bytes, root: join(dir, 'x') }
}

describe('a built package', () => {
  test('is ready with its artifact, verifies with sha256sum and openssl, and announces itself once', async () => {
    const { t, created, pkg, version } = await readyPackage()
    expect(created).toMatchObject({
      status: 'queued',
      targetArch: 'cpu',
      imageLine: { baseImage: 'python:3.11-slim-bookworm' },
      steps: 5,
      wireProtocols: [{ name: 'openpi-ws', port: 8000 }],
    })
    expect(created.workflowId).toBe(`edge-package/${t.tenantId}/cpu/${created.id}`)
    expect(pkg.progress.bytesDone).toBe(pkg.progress.bytesTotal)
    expect(pkg.artifact.bucket).toBe(t.exportBucket)
    expect(new Date(pkg.artifact.downloadUrlExpiresAt).getTime()).toBeGreaterThan(Date.now())

    const { dir, bytes, root } = await download(pkg.artifact.downloadUrl)
    expect(bytes.length).toBe(pkg.artifact.sizeBytes)
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(pkg.artifact.sha256)
    // gzip header: no timestamp; tar entries: fixed owner and time.
    expect(bytes.readUInt32LE(4)).toBe(0)
    const listing = sh('tar', ['--numeric-owner', '--full-time', '-tvzf', 'package.tar.gz'], dir).trim().split('\n')
    // Only the launcher is executable.
    for (const line of listing)
      expect(line).toMatch(line.endsWith(' launch.sh') ? /^-rwxr-xr-x 0\/0 .* 1970-01-01 00:00:00 / : /^-rw-r--r-- 0\/0 .* 1970-01-01 00:00:00 /)
    const names = listing.map((l) => l.split(' ').at(-1)!)
    expect(names).toEqual([
      'manifest.json',
      'Dockerfile',
      'README.md',
      'compose.yaml',
      'launch.sh',
      'model/config/norm.json',
      'model/policy.onnx',
      'requirements/robot-client.txt',
      'runtime/chunking.py',
      'runtime/contract.py',
      'runtime/robot_client.py',
      'runtime/robot_io.py',
      'runtime/run_report.py',
      'provenance.intoto.jsonl',
      'SHA256SUMS',
    ])
    // docs/robots.md's order, statement by statement: the manifest first, the rest sorted by path, then what hashes it.
    const order = readmeParagraph('**Contents**, in this order:')
    expect(order).toContain('`manifest.json` first')
    expect(order).toContain('then the runtime files and `model/<files>` sorted by path')
    expect(order).toContain('then `provenance.intoto.jsonl`, then `SHA256SUMS`')
    expect(names[0]).toBe('manifest.json')
    const middle = names.slice(1, -2)
    expect(middle).toEqual([...middle].sort())
    expect(names.slice(-2)).toEqual(['provenance.intoto.jsonl', 'SHA256SUMS'])

    // Every file but SHA256SUMS itself is listed, and every line checks.
    const sums = readFileSync(join(root, 'SHA256SUMS'), 'utf8').trim().split('\n')
    expect(sums.map((l) => l.split('  ')[1])).toEqual(names.filter((n) => n !== 'SHA256SUMS'))
    expect(sh('sha256sum', ['--strict', '-c', 'SHA256SUMS'], root)).toContain('model/policy.onnx: OK')
    expect(readFileSync(join(root, 'model/policy.onnx'))).toEqual(FILES['policy.onnx'])

    const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8'))
    expect(manifest).toMatchObject({
      packageId: created.id,
      mode: 'remote_ws',
      remotePolicy: { host: 'policy.internal', port: 8000 },
      modelFiles: ['config/norm.json', 'policy.onnx'],
      baseImage: 'python:3.11-slim-bookworm',
    })

    // The DSSE envelope, verified by openssl with the key the public endpoint lists.
    const keys = await fetch(`${env.api.url}/v1/edge-inference-packages/signing-keys`)
    expect(keys.status).toBe(200)
    const [key] = (await keys.json()).data
    const envelope = JSON.parse(readFileSync(join(root, 'provenance.intoto.jsonl'), 'utf8'))
    expect(envelope.payloadType).toBe('application/vnd.in-toto+json')
    expect(envelope.signatures[0].keyid).toBe(key.keyId)
    const payload = Buffer.from(envelope.payload, 'base64')
    // The pre-authentication encoding written out by hand from the DSSE spec, not by our signing code.
    const pae = (body: Buffer) => Buffer.concat([Buffer.from(`DSSEv1 ${envelope.payloadType.length} ${envelope.payloadType} ${body.length} `), body])
    writeFileSync(join(dir, 'pae.bin'), pae(payload))
    writeFileSync(join(dir, 'pae-tampered.bin'), pae(Buffer.from(payload.toString().replace('policy.onnx', 'pwned.onnx'))))
    writeFileSync(join(dir, 'sig.bin'), Buffer.from(envelope.signatures[0].sig, 'base64'))
    writeFileSync(join(dir, 'pub.pem'), key.publicKeyPem)
    const verify = (file: string) => sh('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', 'pub.pem', '-rawin', '-in', file, '-sigfile', 'sig.bin'], dir)
    expect(verify('pae.bin')).toContain('Signature Verified Successfully')
    expect(() => verify('pae-tampered.bin')).toThrow()
    expect(dssePae(envelope.payloadType, payload)).toEqual(pae(payload))

    const statement = JSON.parse(payload.toString())
    expect(statement._type).toBe('https://in-toto.io/Statement/v1')
    expect(statement.predicateType).toBe('https://slsa.dev/provenance/v1')
    const subjects = Object.fromEntries(statement.subject.map((s: { name: string; digest: { sha256: string } }) => [s.name, s.digest.sha256]))
    for (const line of sums.filter((l) => !l.endsWith('provenance.intoto.jsonl'))) expect(subjects[line.split('  ')[1]!]).toBe(line.split('  ')[0])
    expect(statement.predicate.runDetails.metadata.invocationId).toBe(created.workflowId)
    expect(statement.predicate.buildDefinition.externalParameters).toMatchObject({
      ...REQUEST,
      modelVersionId: version.id,
      targetArch: 'cpu',
      wireProtocols: ['openpi-ws'],
    })
    expect(statement.predicate.buildDefinition.resolvedDependencies.map((d: { digest: { sha256: string } }) => d.digest.sha256).sort()).toEqual(
      version.objects.map((o) => o.sha256).sort(),
    )

    const events = await env.api.sql<
      { type: string; data: Record<string, unknown> }[]
    >`select type, data from events where tenant_id = ${t.tenantId} and type like 'edge_package.%'`
    expect([...events]).toEqual([
      { type: 'edge_package.ready', data: expect.objectContaining({ packageId: created.id, sha256: pkg.artifact.sha256, sizeBytes: pkg.artifact.sizeBytes }) },
    ])
    // One artifact, nothing half-uploaded under the package.
    const s3 = localS3()
    const keysUnder: string[] = []
    for await (const o of s3.listObjectsV2(t.exportBucket, `edge-packages/${created.id}/`, true)) keysUnder.push(o.name!)
    expect(keysUnder).toEqual([pkg.artifact.key])
  }, 120_000)

  test('rebuilt from the same plan gives the same bytes; a second identical request differs only by its id', async () => {
    const { t, profileId, version, pkg } = await readyPackage()
    const deps = { ...env.api.deps, log: createLogger('silent', {}) }
    // The plan the workflow fixed (the begin activity's result in its history): what a retried build packs.
    const history = await env.t.client.workflow.getHandle(pkg.workflowId).fetchHistory()
    const begun = history.events!.find((e) => e.activityTaskCompletedEventAttributes)!.activityTaskCompletedEventAttributes!
    const plan: EdgePackagePlan = JSON.parse(Buffer.from(begun.result!.payloads![0]!.data!).toString())
    expect(plan).toEqual({ ...(await planEdgePackage(deps, t.tenantId, pkg.id)), manifest: expect.anything() })
    const rebuilt = await writeArchive({
      s3: localS3(),
      plan: { ...plan, artifactKey: `edge-packages/${pkg.id}/rebuild.tar.gz` },
      signingKey: signingPrivateKey(deps.config),
      runtime: runtimeFilesFor(plan.manifest),
      onProgress: () => {},
    })
    expect(rebuilt.sha256).toBe(pkg.artifact.sha256)
    expect(rebuilt.sizeBytes).toBe(pkg.artifact.sizeBytes)

    const second = await t.models.post(`/model-versions/${version.id}/edge-inference-package`, { ...REQUEST, embodimentProfileId: profileId })
    expect(second.status).toBe(201)
    const other = await packageIn(t.models, second.json.data.id, ['ready'])
    expect(other.artifact.sha256).not.toBe(pkg.artifact.sha256)
    const [a, b] = [await download(pkg.artifact.downloadUrl), await download(other.artifact.downloadUrl)]
    expect(filesUnder(b.root)).toEqual(filesUnder(a.root))
    const differing = filesUnder(a.root).filter((f) => !readFileSync(join(a.root, f)).equals(readFileSync(join(b.root, f))))
    // What docs/robots.md says differs, and nothing else: the package id is in the manifest and what hashes it only.
    const claim = /identical requests differ only in (.*?);/.exec(readmeParagraph('**Determinism**'))
    expect(claim).not.toBeNull()
    expect(differing).toEqual(backticked(claim![1]!).sort())
    expect(differing).toEqual(['SHA256SUMS', 'manifest.json', 'provenance.intoto.jsonl'])
    const manifestOf = (root: string) => JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8'))
    expect({ ...manifestOf(b.root), packageId: pkg.id }).toEqual(manifestOf(a.root))
  }, 120_000)

  test('runs: the robot reports with a model:write token, the page lists them, run.finished is published', async () => {
    const { t, pkg } = await readyPackage()
    const report = {
      stepsDone: 5,
      latencyMs: { p50: 12.5, p99: 40 },
      contractViolations: 0,
      exitReason: 'completed',
      violations: [],
      startedAt: '2026-01-01T00:00:00Z',
      finishedAt: '2026-01-01T00:00:05Z',
    }
    const res = await t.models.post(`/edge-inference-packages/${pkg.id}/runs`, report)
    expect(res.status).toBe(201)
    // A package built before chunked control reports no control-loop fields: they read null.
    expect(res.json.data).toMatchObject({
      packageId: pkg.id,
      stepsDone: 5,
      latencyMs: { p50: 12.5, p99: 40 },
      exitReason: 'completed',
      inferences: null,
      underruns: null,
      queueDepth: null,
      loopJitterMs: null,
    })
    const list = await t.models.get(`/edge-inference-packages/${pkg.id}/runs`)
    expect(list.json.data.map((r: { id: string }) => r.id)).toEqual([res.json.data.id])
    const [event] = await env.api.sql<{ data: Record<string, unknown> }[]>`select data from events where tenant_id = ${t.tenantId} and type = 'run.finished'`
    expect(event!.data).toEqual({
      packageId: pkg.id,
      runId: res.json.data.id,
      stepsDone: 5,
      exitReason: 'completed',
      contractViolations: 0,
      latencyMs: { p50: 12.5, p99: 40 },
      projectId: null,
    })
    expect((await t.models.post(`/edge-inference-packages/${pkg.id}/runs`, { ...report, stepsDone: -1 })).status).toBe(400)
    expect((await t.models.post(`/edge-inference-packages/${pkg.id}/runs`, { ...report, exitReason: 'bored' })).status).toBe(400)
    // A read-only token cannot report.
    const { patFor } = await import('../support/fixtures')
    const reader = t.client.withBearer((await patFor(t.client, ['model:read'])).token)
    expect((await reader.post(`/edge-inference-packages/${pkg.id}/runs`, report)).status).toBe(403)
  }, 120_000)

  test("runs carry the control loop's figures: inferences, underruns, queue depth, jitter p99; another tenant sees none", async () => {
    const { t, pkg } = await readyPackage()
    const control = { inferences: 12, underruns: 3, queueDepth: { max: 50, mean: 31.25 }, loopJitterMs: { p99: 1.75 } }
    const report = {
      stepsDone: 300,
      latencyMs: { p50: 80, p99: 140 },
      contractViolations: 0,
      exitReason: 'completed',
      violations: [],
      ...control,
      startedAt: '2026-01-01T00:00:00Z',
      finishedAt: '2026-01-01T00:00:06Z',
    }
    const res = await t.models.post(`/edge-inference-packages/${pkg.id}/runs`, report)
    expect(res.status).toBe(201)
    expect(res.json.data).toMatchObject(control)
    const list = await t.models.get(`/edge-inference-packages/${pkg.id}/runs`)
    expect(list.json.data[0]).toMatchObject({ id: res.json.data.id, ...control })
    for (const bad of [
      { underruns: -1 },
      { inferences: 1.5 },
      { queueDepth: { max: 2 } },
      { loopJitterMs: { p99: -3 } },
      { queueDepth: { max: 1, mean: 1, min: 0 } },
    ]) {
      const refused = await t.models.post(`/edge-inference-packages/${pkg.id}/runs`, { ...report, ...bad })
      expect([refused.status, refused.json.code]).toEqual([400, 'VALIDATION_ERROR'])
    }
    const other = await modelTenant(env.api.url)
    expect((await other.models.get(`/edge-inference-packages/${pkg.id}/runs`)).status).toBe(404)
    expect((await other.models.post(`/edge-inference-packages/${pkg.id}/runs`, report)).status).toBe(404)
    expect((await t.models.get(`/edge-inference-packages/${pkg.id}/runs`)).json.data).toHaveLength(1)
  }, 120_000)
})
