// The package really runs, reached the way a customer reaches it, through the API only (no row written by SQL): a profile and a model version created over HTTP, the checkpoint PUT through presigned URLs
// with plain fetch, validated by the workflow, the package built by the runner's worker, downloaded through its URL,
// checked with stock tools (sha256sum, tar, openssl over a DSSE pre-authentication encoding written here), its own
// requirements installed and its own launcher run under each robot Python (3.10 and 3.11); the robot's run report lands in the real API and the outbox.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Feature } from '../../api/embodiment-profiles/model'
import { useApiAndTemporal } from '../storage/helpers'
import { freePort, launchPackage, requirements, runProcess } from '../support/edge-package'
import { patFor } from '../support/fixtures'
import { actionValue, startOpenpiServer, type OpenpiTestServer } from '../support/openpi-server'
import { pythonVenv, pythonVenvOn, ROBOT_PYTHONS, type PythonVersion } from '../../scripts/python-venv'
import { modelTenant, settled, sha256, uploadThroughUrls } from '../models/support'
import { packageIn } from './helpers'

const env = useApiAndTemporal()
const dirs: string[] = []
const servers: OpenpiTestServer[] = []
const scratch = () => {
  const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'edge-e2e-'))
  dirs.push(dir)
  return dir
}
const sh = (cmd: string, args: string[], cwd?: string) => execFileSync(cmd, args, { cwd, encoding: 'utf8' })

let onnxPolicy: Uint8Array

beforeAll(async () => {
  // A tiny ONNX policy whose output the test predicts: actions = 2 * observation/state + 1.
  const maker = await pythonVenv(requirements.onnxMaker)
  const out = join(scratch(), 'policy.onnx')
  const made = await runProcess([maker, join(import.meta.dir, 'make_onnx_policy.py'), out, 'observation/state', 'actions', '7'])
  if (made.code !== 0) throw new Error(made.stderr)
  onnxPolicy = readFileSync(out)
}, 600_000)

afterAll(() => {
  for (const s of servers) s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const STATE: Feature = { name: 'observation/state', dtype: 'float32', shape: [7], kind: 'state' }
const CAMERA: Feature = { name: 'observation/image', dtype: 'uint8', shape: [8, 8, 3], kind: 'image' }
const ACTIONS: Feature = { name: 'actions', dtype: 'float32', shape: [7], kind: 'action' }

interface Order {
  profile: { observationFeatures: Feature[]; actionFeatures: Feature[] }
  format: 'onnx' | 'openpi'
  checkpoint: Uint8Array
  request: Record<string, unknown>
}

/** Everything a customer does, over HTTP: profile, version, upload, validation, package; waits for it ready. */
async function orderPackage(order: Order) {
  const t = await modelTenant(env.api.url)
  const profile = await t.pat.post('/embodiment-profiles', { name: 'e2e arm', robotType: 'so100', controlRateHz: 30, ...order.profile })
  expect(profile.status).toBe(201)
  const path = `checkpoints/e2e/${order.format === 'onnx' ? 'policy.onnx' : 'params.bin'}`
  const created = await t.pat.post('/model-versions', {
    name: 'e2e policy',
    format: order.format,
    source: { kind: 'imported_checkpoint', path, sizeBytes: order.checkpoint.length, sha256: sha256(order.checkpoint) },
  })
  expect(created.status).toBe(201)
  const versionId = created.json.data.id
  await uploadThroughUrls(t.pat, versionId, { [path]: order.checkpoint })
  expect((await t.pat.post(`/model-versions/${versionId}/validations`)).status).toBe(202)
  expect(await settled(t.pat, versionId, 60_000)).toMatchObject({ status: 'ready', failureReason: null })
  const ordered = await t.pat.post(`/model-versions/${versionId}/edge-inference-package`, { embodimentProfileId: profile.json.data.id, ...order.request })
  expect(ordered.status).toBe(201)
  const pkg = await packageIn(t.pat, ordered.json.data.id, ['ready', 'failed'], 180_000)
  expect([pkg.status, pkg.failureReason]).toEqual(['ready', null])
  // The robot's token: given at launch, only allowed to report.
  const robotToken = (await patFor(t.client, ['model:write'])).token
  return { t, pkg, robotToken }
}

const filesUnder = (root: string): string[] =>
  readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((p) => statSync(join(root, p)).isFile())
    .sort()

/** Download through the DTO's URL, then trust nothing but stock tools and the public signing key. */
async function downloadAndVerify(pkg: { id: string; artifact: { downloadUrl: string; sha256: string; sizeBytes: number } }) {
  const dir = scratch()
  const res = await fetch(pkg.artifact.downloadUrl)
  expect(res.status).toBe(200)
  const bytes = Buffer.from(await res.arrayBuffer())
  expect(bytes.length).toBe(pkg.artifact.sizeBytes)
  expect(sha256(bytes)).toBe(pkg.artifact.sha256)
  writeFileSync(join(dir, 'package.tar.gz'), bytes)
  const root = join(dir, 'package')
  sh('mkdir', [root])
  sh('tar', ['-xzf', 'package.tar.gz', '-C', root], dir)

  // Every file but SHA256SUMS has a line, and every line checks.
  const files = filesUnder(root)
  const sums = readFileSync(join(root, 'SHA256SUMS'), 'utf8').trim().split('\n')
  expect(sums.map((l) => l.slice(66)).sort()).toEqual(files.filter((f) => f !== 'SHA256SUMS'))
  const checked = sh('sha256sum', ['--strict', '-c', 'SHA256SUMS'], root).trim().split('\n')
  expect(checked).toHaveLength(sums.length)
  for (const line of checked) expect(line).toEndWith(': OK')
  // The robot's token is given at launch, never packed: no file of the package holds a PAT.
  for (const f of files) expect(readFileSync(join(root, f), 'latin1')).not.toContain('rcp_pat_')

  // The DSSE signature, verified by openssl with the key the public endpoint lists.
  const keys = await fetch(`${env.api.url}/v1/edge-inference-packages/signing-keys`)
  expect(keys.status).toBe(200)
  writeFileSync(join(dir, 'pub.pem'), (await keys.json()).data[0].publicKeyPem)
  const envelope = JSON.parse(readFileSync(join(root, 'provenance.intoto.jsonl'), 'utf8'))
  const type: string = envelope.payloadType
  const payload = Buffer.from(envelope.payload, 'base64')
  const pae = (body: Buffer) => Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(type)} ${type} ${body.length} `), body])
  writeFileSync(join(dir, 'pae.bin'), pae(payload))
  writeFileSync(join(dir, 'pae-other.bin'), pae(Buffer.concat([payload, Buffer.from(' ')])))
  writeFileSync(join(dir, 'sig.bin'), Buffer.from(envelope.signatures[0].sig, 'base64'))
  const verify = (file: string) => sh('openssl', ['pkeyutl', '-verify', '-pubin', '-inkey', 'pub.pem', '-rawin', '-in', file, '-sigfile', 'sig.bin'], dir)
  expect(verify('pae.bin')).toContain('Signature Verified Successfully')
  expect(() => verify('pae-other.bin')).toThrow()

  // The signed statement names every content file with the digest of the bytes unpacked here.
  const statement = JSON.parse(payload.toString('utf8'))
  expect(statement._type).toBe('https://in-toto.io/Statement/v1')
  const subjects = Object.fromEntries(statement.subject.map((s: { name: string; digest: { sha256: string } }) => [s.name, s.digest.sha256]))
  const content = files.filter((f) => f !== 'SHA256SUMS' && f !== 'provenance.intoto.jsonl')
  expect(Object.keys(subjects).sort()).toEqual(content)
  for (const f of content)
    expect(subjects[f]).toBe(
      createHash('sha256')
        .update(readFileSync(join(root, f)))
        .digest('hex'),
    )
  return root
}

/** The package's own requirements file, installed into a venv on the given Python (the same pins as the runtime's, so
 *  the robot-side tests' venvs serve), and checked to be that Python. */
async function packagePython(root: string, file: string, expected: string, version: PythonVersion) {
  expect(readFileSync(join(root, file))).toEqual(readFileSync(expected))
  const python = await pythonVenvOn(version, join(root, file))
  expect(sh(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])']).trim()).toBe(version)
  return python
}

async function runsOf(t: Awaited<ReturnType<typeof modelTenant>>, packageId: string) {
  const res = await t.pat.get(`/edge-inference-packages/${packageId}/runs`)
  expect(res.status).toBe(200)
  const events = await env.api.sql<{ data: Record<string, unknown> }[]>`
    select data from events where tenant_id = ${t.tenantId} and type = 'run.finished' order by occurred_at, id`
  return { runs: res.json.data as Record<string, unknown>[], events: events.map((e) => e.data) }
}

const actionLines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
const noTraceback = (stderr: string) => expect(stderr.split('\n').filter((l) => l.includes('Traceback'))).toEqual([])

describe('an edge package ordered through the API really runs', () => {
  test('remote_ws + openpi-ws on cpu: verified, its own client drives `steps` profile-checked actions, the run reaches the API', async () => {
    const policy = startOpenpiServer({ actions: [ACTIONS] })
    servers.push(policy)
    const steps = 12
    const { t, pkg, robotToken } = await orderPackage({
      profile: { observationFeatures: [CAMERA, STATE], actionFeatures: [ACTIONS] },
      format: 'openpi',
      checkpoint: new Uint8Array(4096).map((_, i) => (i * 7) % 256),
      request: {
        mode: 'remote_ws',
        remotePolicyHost: '127.0.0.1',
        remotePolicyPort: policy.port,
        targetArch: 'cpu',
        wireProtocols: ['openpi-ws'],
        steps,
        useFakeTransport: true,
      },
    })
    const root = await downloadAndVerify(pkg)
    // The package carries the request as understood and the profile as the contract.
    expect(JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8'))).toMatchObject({
      packageId: pkg.id,
      mode: 'remote_ws',
      targetArch: 'cpu',
      steps,
      useFakeTransport: true,
      remotePolicy: { host: '127.0.0.1', port: policy.port },
      wireProtocols: [{ name: 'openpi-ws', port: 8000 }],
      embodiment: { observationFeatures: [CAMERA, STATE], actionFeatures: [ACTIONS] },
    })
    // The same package, run once under each robot Python (JetPack 6's 3.10, the cpu image's 3.11): one run report each.
    for (const [i, version] of ROBOT_PYTHONS.entries()) {
      const python = await packagePython(root, 'requirements/robot-client.txt', requirements.robotClient, version)
      const out = join(root, '..', `actions-${version}.jsonl`)
      policy.observations.length = 0
      // The next chunk is asked for once the queue is empty, so the steps each chunk drives are known.
      const run = await launchPackage(root, python, { RCP_API_BASE: env.api.url, RCP_TOKEN: robotToken, RCP_ACTIONS_OUT: out, RCP_CHUNK_THRESHOLD: '0' })
      noTraceback(run.stderr)
      expect(run.code).toBe(0)

      // The policy saw one observation per chunk of 4, shaped by the profile; the robot got each action of each chunk
      // once, in order.
      expect(policy.observations).toHaveLength(steps / 4)
      for (const obs of policy.observations) {
        expect(obs['observation/image']).toMatchObject({ dtype: '|u1', shape: [8, 8, 3] })
        expect(obs['observation/state']).toMatchObject({ dtype: '<f4', shape: [7] })
      }
      const lines = actionLines(out)
      expect(lines).toHaveLength(steps)
      lines.forEach((line, step) => {
        const action = line.action.actions as number[]
        expect(action).toHaveLength(7)
        action.forEach((v, i) => {
          expect(v).toBeCloseTo(actionValue(Math.floor(step / 4), (step % 4) * 7 + i), 4)
        })
      })

      const { runs, events } = await runsOf(t, pkg.id)
      expect(runs).toHaveLength(i + 1)
      expect(runs[0]).toMatchObject({
        packageId: pkg.id,
        stepsDone: steps,
        contractViolations: 0,
        exitReason: 'completed',
        violations: [],
        inferences: steps / 4,
        underruns: 0,
        queueDepth: { max: 4, mean: 2.5 },
        loopJitterMs: null,
      })
      const latency = runs[0]!.latencyMs as { p50: number; p99: number }
      expect(latency.p50).toBeGreaterThan(0)
      expect(latency.p99).toBeGreaterThanOrEqual(latency.p50)
      expect(events).toHaveLength(i + 1)
      expect(events[i]).toEqual(expect.objectContaining({ packageId: pkg.id, runId: runs[0]!.id, stepsDone: steps, exitReason: 'completed' }))
    }
  }, 900_000) // two Pythons: on a fresh machine, two venvs of the package's requirements are built first

  test('local + onnx on cpu: its own policy server serves the uploaded ONNX model beside its client; every action is 2 * state + 1', async () => {
    const steps = 15
    const { t, pkg, robotToken } = await orderPackage({
      profile: { observationFeatures: [STATE], actionFeatures: [ACTIONS] },
      format: 'onnx',
      checkpoint: onnxPolicy,
      request: { mode: 'local', targetArch: 'cpu', steps, useFakeTransport: true },
    })
    const root = await downloadAndVerify(pkg)
    expect(readFileSync(join(root, 'model', 'policy.onnx'))).toEqual(Buffer.from(onnxPolicy))
    for (const [i, version] of ROBOT_PYTHONS.entries()) {
      const python = await packagePython(root, 'requirements/onnx-server.txt', requirements.onnxServer, version)
      const out = join(root, '..', `actions-${version}.jsonl`)
      // Another port than the manifest's 8000, which something else on the machine may hold: both processes follow it.
      const run = await launchPackage(root, python, {
        RCP_API_BASE: env.api.url,
        RCP_TOKEN: robotToken,
        RCP_ACTIONS_OUT: out,
        RCP_PORT: String(freePort()),
      })
      noTraceback(run.stderr)
      expect(run.code).toBe(0)

      const lines = actionLines(out)
      expect(lines).toHaveLength(steps)
      for (const { observation, action } of lines) {
        const state = observation['observation/state'] as number[]
        expect(action.actions).toHaveLength(7)
        action.actions.forEach((a: number, i: number) => {
          expect(a).toBeCloseTo(2 * state[i]! + 1, 5)
        })
      }
      expect(new Set(lines.map((l) => l.observation['observation/state'][0])).size).toBe(steps)

      const { runs, events } = await runsOf(t, pkg.id)
      expect(runs).toHaveLength(i + 1)
      expect(runs[0]).toMatchObject({ stepsDone: steps, contractViolations: 0, exitReason: 'completed' })
      expect(events).toHaveLength(i + 1)
      expect(events[i]).toEqual(expect.objectContaining({ packageId: pkg.id, runId: runs[0]!.id, stepsDone: steps }))
    }
  }, 900_000) // two Pythons: on a fresh machine, two venvs of the package's requirements are built first

  test('a profile the policy does not match: the client stops naming the feature, no stack trace, and reports contract_violation', async () => {
    const GRIPPER: Feature = { name: 'gripper/position', dtype: 'float32', shape: [2], kind: 'action' }
    const policy = startOpenpiServer({ actions: [{ ...GRIPPER, shape: [3] }] })
    servers.push(policy)
    const { t, pkg, robotToken } = await orderPackage({
      profile: { observationFeatures: [STATE], actionFeatures: [GRIPPER] },
      format: 'openpi',
      checkpoint: new Uint8Array(1024).fill(3),
      request: { mode: 'remote_ws', remotePolicyHost: '127.0.0.1', remotePolicyPort: policy.port, steps: 10, useFakeTransport: true },
    })
    const root = await downloadAndVerify(pkg)
    for (const [i, version] of ROBOT_PYTHONS.entries()) {
      const python = await packagePython(root, 'requirements/robot-client.txt', requirements.robotClient, version)
      policy.observations.length = 0
      const run = await launchPackage(root, python, { RCP_API_BASE: env.api.url, RCP_TOKEN: robotToken })
      expect(run.code).toBe(2) // the client's documented exit code for a contract violation
      expect(run.stderr.trim().split('\n').at(-1)).toContain("'gripper/position'")
      expect(run.stderr).toContain('got float32[4,3]')
      noTraceback(run.stderr)
      expect(policy.observations).toHaveLength(1)

      const { runs, events } = await runsOf(t, pkg.id)
      expect(runs).toHaveLength(i + 1)
      expect(runs[0]).toMatchObject({
        stepsDone: 0,
        contractViolations: 1,
        exitReason: 'contract_violation',
        violations: [expect.objectContaining({ feature: 'gripper/position' })],
      })
      expect(events).toHaveLength(i + 1)
      expect(events[i]).toEqual(expect.objectContaining({ packageId: pkg.id, exitReason: 'contract_violation', contractViolations: 1 }))
    }
  }, 900_000) // two Pythons: on a fresh machine, two venvs of the package's requirements are built first
})
