// The package's own robot client (openpi-client 0.1.2 in a venv with the package's hash-pinned requirements)
// against a test policy server speaking openpi's websocket protocol: actions checked, runs reported, a contract
// mismatch stopped with the feature's name and no stack trace.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { PackageManifest } from '../../api/edge-packages/manifest'
import type { Feature } from '../../api/embodiment-profiles/model'
import { actionValue, connectOpenpi, encodeFrame, startOpenpiServer, type OpenpiTestServer } from '../support/openpi-server'
import { freePort, launchPackage, requirements, runProcess, startRunReceiver, testManifest, writePackageDir, type RunReceiver } from '../support/edge-package'
import { describeOnRobotPythons } from '../support/robot-pythons'
import { startSlowProxy } from '../support/slow-proxy'

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
const onEachPython = (name: string, body: () => void) =>
  describeOnRobotPythons(
    name,
    [requirements.robotClient],
    (p) => {
      python = p
    },
    body,
  )

function server(answers: Feature[], horizon?: number | null) {
  const s = startOpenpiServer({ actions: answers, horizon })
  servers.push(s)
  return s
}

/** Which request of the test server and which action of its chunk a step applied (see actionValue). */
function origin(action: number[]) {
  const request = Math.floor(action[0]! + 1e-4)
  return { request, index: Math.round((action[0]! - request) * 1000) / 7 }
}

onEachPython('remote_ws + openpi-ws robot client, fake transport', () => {
  test('drives `steps` profile-shaped observations, one request per chunk, each action once in order, and reports the run', async () => {
    const policy = server(actions)
    const run = await runAgainst(policy, { RCP_CHUNK_THRESHOLD: '0' })
    expect(run.stderr).not.toContain('Traceback')
    expect(run.code).toBe(0)
    expect(policy.observations).toHaveLength(3) // 12 steps, chunks of 4, asked for once the queue is empty
    for (const obs of policy.observations) {
      expect(obs['observation/image']).toMatchObject({ dtype: '|u1', shape: [8, 8, 3] })
      expect(obs['observation/state']).toMatchObject({ dtype: '<f4', shape: [7] })
      expect(obs['observation/state']!.data.byteLength).toBe(28)
    }
    const lines = readFileSync(run.out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.map((l) => l.step)).toEqual([...Array(12).keys()])
    lines.forEach(({ step, observationStep, action }) => {
      expect(observationStep).toBe(step - (step % 4))
      expect(action.actions).toHaveLength(7) // one action of the chunk, not the chunk
      action.actions.forEach((v: number, i: number) => {
        expect(v).toBeCloseTo(actionValue(Math.floor(step / 4), (step % 4) * 7 + i), 5)
      })
    })
    expect(run.reports).toHaveLength(1)
    const [report] = run.reports
    expect(report!.path).toBe(`/v1/edge-inference-packages/${manifest.packageId}/runs`)
    expect(report!.authorization).toBe('Bearer robot-token-1')
    expect(report!.body).toMatchObject({
      stepsDone: 12,
      contractViolations: 0,
      exitReason: 'completed',
      violations: [],
      inferences: 3,
      underruns: 0,
      queueDepth: { max: 4, mean: 2.5 },
      loopJitterMs: null, // unthrottled: no period to stray from
    })
    expect(report!.body.latencyMs!.p50).toBeGreaterThan(0)
    expect(report!.body.latencyMs!.p99).toBeGreaterThanOrEqual(report!.body.latencyMs!.p50)
    expect(policy.closes).toEqual([1000]) // the client ends its connection with a closing handshake
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

onEachPython('chunked control at the control rate', () => {
  test('chunks of 10 at 50 Hz: the next chunk is asked for while half of one is queued, the newest chunk wins, in order', async () => {
    const policy = server(actions, 10)
    const run = await runAgainst(policy, { RCP_MAX_HZ: '50' }, 40)
    expect(run.code).toBe(0)
    const lines = readFileSync(run.out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.map((l) => l.step)).toEqual([...Array(40).keys()])
    // Every step plays the action of its step from the newest chunk: request numbers never go back, and within one
    // chunk the index advances by one per step from the step its observation was taken at.
    // (A chunk later than its 100 ms of slack on a busy machine makes holds: each repeats the step before, counted.)
    let previous = -1
    const held = lines.filter((l, i) => i > 0 && JSON.stringify(l.action) === JSON.stringify(lines[i - 1].action))
    for (const { step, observationStep, action } of lines.filter((l) => !held.includes(l))) {
      const { request, index } = origin(action.actions)
      expect(request).toBeGreaterThanOrEqual(previous)
      expect(index).toBe(step - observationStep)
      action.actions.forEach((v: number, i: number) => {
        expect(v).toBeCloseTo(actionValue(request, index * 7 + i), 5)
      })
      previous = request
    }
    expect(policy.observations.length).toBeLessThanOrEqual(40 / 5 + 1) // one request per 5 steps at threshold 0.5
    const report = run.reports[0]!.body
    expect(report).toMatchObject({ stepsDone: 40, exitReason: 'completed', inferences: policy.observations.length, underruns: held.length })
    expect(report.queueDepth!.max).toBe(10)
    expect(report.queueDepth!.mean).toBeGreaterThan(4)
    expect(report.loopJitterMs!.p99).toBeGreaterThanOrEqual(0)
  })

  test('weighted aggregation blends the overlap: 0.3 * queued + 0.7 * newest', async () => {
    const policy = server(actions, 10)
    const run = await runAgainst(policy, { RCP_MAX_HZ: '50', RCP_AGGREGATION: 'weighted' }, 12)
    expect(run.code).toBe(0)
    const lines = readFileSync(run.out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    // The second chunk (request 1) came back while steps 5..9 of the first were queued: those are blends.
    const blended = lines.filter((l) => l.observationStep > 0 && l.step < 10)
    expect(blended.length).toBeGreaterThan(0)
    for (const { step, observationStep, action } of blended)
      expect(action.actions[0]).toBeCloseTo(0.3 * actionValue(0, step * 7) + 0.7 * actionValue(1, (step - observationStep) * 7), 4)
  })

  test('a policy slower than a chunk lasts: underruns are counted, the last action is held, the run completes', async () => {
    const policy = startOpenpiServer({ actions, horizon: 4, delayMs: 150 }) // a chunk of 4 lasts 80 ms at 50 Hz
    servers.push(policy)
    const run = await runAgainst(policy, { RCP_MAX_HZ: '50' }, 30)
    expect(run.stderr).not.toContain('Traceback')
    expect(run.code).toBe(0)
    const lines = readFileSync(run.out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines).toHaveLength(30)
    const report = run.reports[0]!.body
    expect(report.underruns).toBeGreaterThan(0)
    expect(report).toMatchObject({ stepsDone: 30, exitReason: 'completed' })
    expect(report.inferences).toBeLessThan(30)
    // A held step repeats the previous step's action exactly; a step from a chunk never does.
    const held = lines.filter((l, i) => i > 0 && JSON.stringify(l.action) === JSON.stringify(lines[i - 1].action))
    expect(held).toHaveLength(report.underruns!)
  })

  test('settings are flags too when the client is run directly; an unknown flag or a bad value is refused: exit 5 with the reason', async () => {
    const policy = server(actions)
    const dir = writePackageDir(testManifest({ steps: 12, remotePolicy: { host: '127.0.0.1', port: policy.port } }))
    dirs.push(dir)
    const client = (...flags: string[]) =>
      runProcess([python, 'runtime/robot_client.py', ...flags], { cwd: dir, env: { RCP_MANIFEST: join(dir, 'manifest.json'), RCP_API_BASE: receiver.url } })
    const direct = await client('--max-hz', '0', '--chunk-threshold', '0')
    expect(direct.code).toBe(0)
    expect(policy.observations).toHaveLength(3)
    const unknown = await client('--chunk-treshold', '0')
    expect(unknown.code).toBe(5)
    expect(unknown.stderr.trim().split('\n').at(-1)).toBe('unrecognized arguments: --chunk-treshold 0')
    const run = await runAgainst(server(actions), { RCP_AGGREGATION: 'median' }, 2)
    expect(run.code).toBe(5)
    expect(run.stderr.trim().split('\n').at(-1)).toBe('aggregation must be one of replace, weighted, got median')
    const threshold = await runAgainst(server(actions), { RCP_CHUNK_THRESHOLD: '1.5' }, 2)
    expect(threshold.code).toBe(5)
    expect(threshold.stderr).toContain('chunk threshold must be within [0, 1], got 1.5')
  })
})

onEachPython('websocket timeouts of a slow policy server', () => {
  test('a server that accepts but opens 2 s late: survived with RCP_OPEN_TIMEOUT_S=5, dropped with 0.5', async () => {
    const policy = server(actions)
    const patient = startSlowProxy(policy.port, { openAfterMs: 2000 })
    let hasty: ReturnType<typeof startSlowProxy> | undefined
    try {
      const ok = await runAgainst(patient, { RCP_OPEN_TIMEOUT_S: '5', RCP_CONNECT_TIMEOUT_S: '1' }, 3)
      expect(ok.code).toBe(0)
      hasty = startSlowProxy(policy.port, { openAfterMs: 20_000 }) // the client gives up long before
      const dropped = await runAgainst(hasty, { RCP_OPEN_TIMEOUT_S: '0.5', RCP_CONNECT_TIMEOUT_S: '1' }, 3)
      expect(dropped.code).toBe(4)
      expect(dropped.stderr.trim().split('\n').at(-1)).toBe('policy server unreachable: timed out while waiting for handshake response')
    } finally {
      patient.stop()
      hasty?.stop()
    }
  })

  test('a server silent for 1.5 s on its first request: keepalive 0.2/0.3 s drops it, keepalive off waits it out', async () => {
    const policy = server(actions)
    const silentOnce = () => startSlowProxy(policy.port, { freezeMs: 1500 })
    const strict = silentOnce()
    const lenient = silentOnce()
    try {
      const dropped = await runAgainst(strict, { RCP_PING_INTERVAL_S: '0.2', RCP_PING_TIMEOUT_S: '0.3' }, 3)
      expect(dropped.code).toBe(4)
      expect(dropped.stderr).toContain('connection to the policy server lost')
      expect(dropped.stderr).toContain('keepalive ping timeout')
      const waited = await runAgainst(lenient, { RCP_PING_INTERVAL_S: '0' }, 3)
      expect(waited.code).toBe(0)
    } finally {
      strict.stop()
      lenient.stop()
    }
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
      stepsDone: 0,
      contractViolations: 1,
      exitReason: 'contract_violation',
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
