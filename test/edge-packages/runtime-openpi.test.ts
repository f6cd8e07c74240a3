// The package's own robot client (openpi-client 0.1.2 in a venv with the package's hash-pinned requirements)
// against a test policy server speaking openpi's websocket protocol: actions checked, runs reported, a contract
// mismatch stopped with the feature's name and no stack trace.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { PackageManifest } from '../../api/edge-packages/manifest'
import type { Feature } from '../../api/embodiment-profiles/model'
import { actionValue, connectOpenpi, encodeFrame, startOpenpiServer, type OpenpiTestServer } from '../support/openpi-server'
import { freePort, launchPackage, requirements, startRunReceiver, testManifest, writePackageDir, type RunReceiver } from '../support/edge-package'
import { describeOnRobotPythons } from '../support/robot-pythons'

let python: string
let receiver: RunReceiver
const dirs: string[] = []
const servers: OpenpiTestServer[] = []
const manifest = testManifest()
const actions = manifest.embodiment.actionFeatures

beforeAll(async () => {
  receiver = startRunReceiver()
}, 600_000)

afterAll(() => {
  receiver?.stop()
  for (const s of servers) s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

async function runAgainst(server: { port: number }, env: Record<string, string> = {}, steps = 12, overrides: Partial<PackageManifest> = {}) {
  const dir = writePackageDir(testManifest({ steps, remotePolicy: { host: '127.0.0.1', port: server.port }, ...overrides }))
  dirs.push(dir)
  const before = receiver.reports.length
  const out = join(dir, 'actions.jsonl')
  const run = await launchPackage(dir, python, { RCP_API_BASE: receiver.url, RCP_TOKEN: 'robot-token-1', RCP_ACTIONS_OUT: out, ...env })
  return { ...run, dir, out, reports: receiver.reports.slice(before) }
}

/** A describe block run under each robot Python, with the robot client's venv on it. */
const onEachPython = (name: string, body: () => void) => describeOnRobotPythons(name, [requirements.robotClient], (p) => { python = p }, body)

function server(answers: Feature[], horizon?: number | null) {
  const s = startOpenpiServer({ actions: answers, horizon })
  servers.push(s)
  return s
}

onEachPython('remote_ws + openpi-ws robot client, fake transport', () => {
  test('drives `steps` profile-shaped observations, checks every action chunk and reports the run', async () => {
    const policy = server(actions)
    const run = await runAgainst(policy)
    expect(run.stderr).not.toContain('Traceback')
    expect(run.code).toBe(0)
    expect(policy.observations).toHaveLength(12)
    for (const obs of policy.observations) {
      expect(obs['observation/image']).toMatchObject({ dtype: '|u1', shape: [8, 8, 3] })
      expect(obs['observation/state']).toMatchObject({ dtype: '<f4', shape: [7] })
      expect(obs['observation/state']!.data.byteLength).toBe(28)
    }
    const lines = readFileSync(run.out, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    expect(lines).toHaveLength(12)
    expect(lines[5].action.actions).toHaveLength(4) // the chunk's leading horizon dimension
    expect(lines[5].action.actions[2][3]).toBeCloseTo(actionValue(5, 2 * 7 + 3), 5)
    expect(run.reports).toHaveLength(1)
    const [report] = run.reports
    expect(report!.path).toBe(`/v1/edge-inference-packages/${manifest.packageId}/runs`)
    expect(report!.authorization).toBe('Bearer robot-token-1')
    expect(report!.body).toMatchObject({ stepsDone: 12, contractViolations: 0, exitReason: 'completed', violations: [] })
    expect(report!.body.latencyMs!.p50).toBeGreaterThan(0)
    expect(report!.body.latencyMs!.p99).toBeGreaterThanOrEqual(report!.body.latencyMs!.p50)
  })

  test('an action without the chunk dimension conforms too', async () => {
    const run = await runAgainst(server(actions, null), {}, 3)
    expect(run.code).toBe(0)
    expect(run.reports[0]!.body).toMatchObject({ stepsDone: 3, exitReason: 'completed' })
  })

  test('no token: the report goes without Authorization; an unreachable API is logged, never fatal', async () => {
    const anonymous = await runAgainst(server(actions), { RCP_TOKEN: '' }, 2)
    expect(anonymous.code).toBe(0)
    expect(anonymous.reports[0]!.authorization).toBeNull()
    const unreachable = await runAgainst(server(actions), { RCP_API_BASE: 'http://127.0.0.1:9' }, 2)
    expect(unreachable.code).toBe(0)
    expect(unreachable.stderr).toContain('run report not sent')
  })
})

onEachPython('a profile the policy does not match', () => {
  test('a wrong shape stops the client with the feature named, expected vs got, no stack trace', async () => {
    const policy = server([{ name: 'actions', dtype: 'float32', shape: [6] }])
    const run = await runAgainst(policy)
    expect(run.code).toBe(2)
    const last = run.stderr.trim().split('\n').at(-1)!
    expect(last).toBe("contract violation: action feature 'actions' expected float32[7] or [H,7], got float32[4,6]")
    expect(run.stderr).not.toContain('Traceback')
    expect(policy.observations).toHaveLength(1) // stopped at the first chunk
    expect(run.reports[0]!.body).toMatchObject({
      stepsDone: 0, contractViolations: 1, exitReason: 'contract_violation',
      violations: [{ feature: 'actions', expected: 'float32[7] or [H,7]', got: 'float32[4,6]' }],
    })
  })

  test('a wrong dtype and a missing feature are violations too', async () => {
    const wrongType = await runAgainst(server([{ name: 'actions', dtype: 'float64', shape: [7] }]))
    expect(wrongType.code).toBe(2)
    expect(wrongType.stderr).toContain("action feature 'actions' expected float32[7] or [H,7], got float64[4,7]")
    const missing = await runAgainst(server([{ name: 'gripper', dtype: 'float32', shape: [1] }]))
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("action feature 'actions' expected float32[7] or [H,7], got nothing")
    expect(missing.stderr).not.toContain('Traceback')
  })

  test("the server's error text frame ends the run as a server error, without a stack trace", async () => {
    const failing = startOpenpiServer({ actions, failWith: 'checkpoint exploded' })
    servers.push(failing)
    const run = await runAgainst(failing)
    expect(run.code).toBe(3)
    expect(run.stderr).toContain('checkpoint exploded')
    expect(run.stderr).not.toContain('Traceback')
    expect(run.reports[0]!.body).toMatchObject({ stepsDone: 0, exitReason: 'server_error', contractViolations: 0 })
  })
})

onEachPython('runs that cannot act', () => {
  test('without fake transport and with robot_io.py not filled in, the client says so and exits 5', async () => {
    const run = await runAgainst(server(actions), {}, 3, { useFakeTransport: false })
    expect(run.code).toBe(5)
    expect(run.stderr.trim().split('\n').at(-1)).toBe('real transport not wired: fill in runtime/robot_io.py read_observation()')
    expect(run.reports[0]!.body).toMatchObject({ stepsDone: 0, exitReason: 'not_runnable' })
  })

  test('no policy server at the remote address: connection lost after the connect timeout, exit 4', async () => {
    const run = await runAgainst({ port: freePort() }, { RCP_CONNECT_TIMEOUT_S: '1' }, 3)
    expect(run.code).toBe(4)
    expect(run.stderr).toContain('policy server unreachable')
    expect(run.stderr).not.toContain('Traceback')
    expect(run.reports[0]!.body).toMatchObject({ stepsDone: 0, exitReason: 'connection_lost', latencyMs: null })
  })
})

test('the test policy server answers a malformed frame with an error frame and keeps serving', async () => {
  const policy = server(actions)
  const client = await connectOpenpi(`ws://127.0.0.1:${policy.port}`)
  expect(await client.send(new Uint8Array([0x92]))).toMatch(/^Error in test policy server: /) // truncated msgpack
  expect(await client.closed).toBe(1011)
  const second = await connectOpenpi(`ws://127.0.0.1:${policy.port}`)
  expect(await second.send(encodeFrame([1, 2]))).toBe('Error in test policy server: an observation is a map of features')
  const run = await runAgainst(policy, {}, 2)
  expect(run.code).toBe(0)
})

// Last in the file: every report the runs above sent is one the API's run endpoint accepts.
test("every run report matches the API's request schema (EdgePackageRunReportDto)", () => {
  expect(receiver.reports.length).toBeGreaterThan(0)
  expect(receiver.refused).toEqual([])
})
