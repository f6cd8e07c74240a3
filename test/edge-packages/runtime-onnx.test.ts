// local + onnx on cpu, end to end: the package's own launch.sh starts its ONNX policy server (onnxruntime, openpi
// websocket protocol) and its robot client with fake transport; a tiny ONNX policy (actions = 2 * state + 1)
// lets the test check every action numerically.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { networkInterfaces } from 'node:os'
import { join } from 'node:path'
import { freePort, launchPackage, requirements, runProcess, startRunReceiver, testManifest, writePackageDir, type RunReceiver } from '../support/edge-package'
import { connectOpenpi, encodeFrame, float32s, packArray, type NdArray } from '../support/openpi-server'
import { pythonVenv } from '../../scripts/python-venv'
import { describeOnRobotPythons } from '../support/robot-pythons'
import { eventually } from '../support/temporal'

let serverPython: string
let model: Uint8Array
let receiver: RunReceiver
const dirs: string[] = []

beforeAll(async () => {
  const maker = await pythonVenv(requirements.onnxMaker)
  const scratch = writePackageDir(testManifest())
  dirs.push(scratch)
  const made = await runProcess([maker, join(import.meta.dir, 'make_onnx_policy.py'), join(scratch, 'policy.onnx'), 'observation/state', 'actions', '7'])
  if (made.code !== 0) throw new Error(made.stderr)
  model = readFileSync(join(scratch, 'policy.onnx'))
  receiver = startRunReceiver()
}, 600_000)

afterAll(() => {
  receiver?.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const localManifest = (port: number, steps: number) =>
  testManifest({ mode: 'local', remotePolicy: null, steps, wireProtocols: [{ name: 'openpi-ws', port }], modelFiles: ['policy.onnx'] })

describeOnRobotPythons(
  "the package's ONNX server and robot client",
  [requirements.onnxServer],
  (p) => {
    serverPython = p
  },
  () => {
    test('the package serves its ONNX model beside its robot client and every action is 2 * state + 1', async () => {
      const dir = writePackageDir(localManifest(freePort(), 15), { 'policy.onnx': model })
      dirs.push(dir)
      const out = join(dir, 'actions.jsonl')
      const run = await launchPackage(dir, serverPython, { RCP_API_BASE: receiver.url, RCP_TOKEN: 'tok', RCP_ACTIONS_OUT: out })
      expect(run.stderr).not.toContain('Traceback')
      expect(run.code).toBe(0)
      const lines = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
      expect(lines).toHaveLength(15)
      for (const { observation, action } of lines) {
        const state = observation['observation/state'] as number[]
        expect(action.actions).toHaveLength(7)
        action.actions.forEach((a: number, i: number) => {
          expect(a).toBeCloseTo(2 * state[i]! + 1, 5)
        })
      }
      expect(new Set(lines.map((l) => l.observation['observation/state'][0])).size).toBe(15) // fresh observations each step
      expect(receiver.reports.at(-1)!.body).toMatchObject({ stepsDone: 15, contractViolations: 0, exitReason: 'completed' })
    }, 120_000)

    test("a model that lacks an observation's input answers an error frame: a server error, not a stack trace", async () => {
      const dir = writePackageDir(
        {
          ...localManifest(freePort(), 3),
          embodiment: { ...testManifest().embodiment, observationFeatures: [{ name: 'joints', dtype: 'float32', shape: [7] }] },
        },
        { 'policy.onnx': model },
      )
      dirs.push(dir)
      const run = await launchPackage(dir, serverPython, { RCP_API_BASE: receiver.url })
      expect(run.code).toBe(3)
      expect(run.stderr).toContain("observation lacks 'observation/state', an input of the ONNX model")
      expect(run.stderr.split('\n').filter((l) => l.includes('Traceback'))).toEqual([])
    }, 120_000)

    /** The package's ONNX server started on its own (as launch.sh starts it), healthy, for the time of `use`. */
    async function withOnnxServer(use: (port: number) => Promise<void>) {
      const port = freePort()
      const dir = writePackageDir(localManifest(port, 1), { 'policy.onnx': model })
      dirs.push(dir)
      const server = Bun.spawn([serverPython, join(dir, 'runtime', 'onnx_policy_server.py')], { cwd: dir, stdout: 'ignore', stderr: 'ignore' })
      try {
        await eventually('the health check', async () => ((await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok ? true : undefined))
        await use(port)
      } finally {
        server.kill()
      }
    }

    test("the package's ONNX server speaks openpi's protocol to another implementation (msgpackr), errors as a text frame", async () => {
      await withOnnxServer(async (port) => {
        const client = await connectOpenpi(`ws://127.0.0.1:${port}`)
        expect(client.metadata).toMatchObject({ packageId: 'pkg_test_0001', inputs: ['observation/state'], outputs: ['actions'] })
        const answer = (await client.send(encodeFrame(new Map([['observation/state', packArray('float32', [7], (i) => i - 3)]])))) as Record<string, NdArray>
        expect(answer.actions).toMatchObject({ dtype: '<f4', shape: [7] })
        expect(float32s(answer.actions!)).toEqual([-5, -3, -1, 1, 3, 5, 7])
        expect(await client.send(encodeFrame(new Map([['joints', packArray('float32', [7], () => 0)]])))).toBe(
          "ValueError: observation lacks 'observation/state', an input of the ONNX model",
        )
        expect(await client.closed).toBe(1011)
        const again = await connectOpenpi(`ws://127.0.0.1:${port}`) // one bad request never takes the server down
        expect(again.metadata).toMatchObject({ outputs: ['actions'] })
        again.close()
      })
    }, 120_000)

    /** An IPv4 address of this machine that is not loopback: where someone on the robot's network would connect. */
    function networkAddress(): string {
      const address = Object.values(networkInterfaces())
        .flat()
        .find((a) => a && a.family === 'IPv4' && !a.internal)?.address
      if (!address) throw new Error('this machine has no non-loopback IPv4 address to attack from')
      return address
    }

    test("the package's ONNX server answers on 127.0.0.1 only: a caller on the robot's network is refused", async () => {
      await withOnnxServer(async (port) => {
        const outside = await fetch(`http://${networkAddress()}:${port}/healthz`).then(
          (r) => `answered ${r.status}`,
          (err: Error) => `refused: ${err.message}`,
        )
        expect(outside).toStartWith('refused')
      })
    }, 120_000)
  },
)

// Last in the file: every report the runs above sent is one the API's run endpoint accepts.
test("every run report matches the API's request schema (EdgePackageRunReportDto)", () => {
  expect(receiver.reports.length).toBeGreaterThan(0)
  expect(receiver.refused).toEqual([])
})
