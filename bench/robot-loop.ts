// The robot's control loop: `bun bench/robot-loop.ts [--hz 50] [--steps 500] [--chunk 50] [--latency-ms 30]` plus the
// harness's flags (3 rounds by default). bench/robot-loop.py runs, in the robot client's own venv (its hash-pinned
// requirements), the package's chunked controller (runtime/python/chunking.py) against a fake in-process transport
// that answers a chunk after --latency-ms, and in the same rounds the baseline: a bare loop on the same schedule that
// only sleeps (the timer's ceiling on this machine). Also the client before chunked control: one blocking request per
// step. Rate is ticks/s (the control rate held), p50/p99 the loop's jitter (how far a tick interval strays from the period),
// noted with inference requests per step and underruns. Results in bench/results/robot-loop.json.
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { pythonVenv } from '../scripts/python-venv'
import { benchmark, ROOT, type Sample } from './harness'

interface Loop {
  ticksPerSecond: number
  jitterP50Ms: number
  jitterP99Ms: number
  requestsPerStep: number
  underruns: number
}

await benchmark('robot-loop', { hz: { type: 'string' }, steps: { type: 'string' }, chunk: { type: 'string' }, 'latency-ms': { type: 'string' } }, async (h) => {
  const python = await pythonVenv(join(ROOT, 'activities/edge-package/runtime/requirements/robot-client.txt'))
  const args = [
    '--hz',
    String(h.flags.hz ?? 50),
    '--steps',
    String(h.flags.steps ?? h.settings.duration * 50),
    '--chunk',
    String(h.flags.chunk ?? 50),
    '--latency-ms',
    String(h.flags['latency-ms'] ?? 30),
  ]
  const loop = (mode: string): Loop => JSON.parse(execFileSync(python, [join(ROOT, 'bench/robot-loop.py'), mode, ...args], { encoding: 'utf8' }).trim())
  let bare: Loop | undefined
  const sample = (l: Loop, against?: Loop): Sample => ({
    rate: l.ticksPerSecond,
    p50Ms: l.jitterP50Ms,
    p99Ms: l.jitterP99Ms,
    note:
      `${l.requestsPerStep.toFixed(3)} requests/step, ${l.underruns} underruns, jitter p99 ${l.jitterP99Ms.toFixed(2)} ms` +
      (against ? ` (${(l.jitterP99Ms / against.jitterP99Ms).toFixed(2)}× the bare loop's ${against.jitterP99Ms.toFixed(2)} ms just before)` : ''),
  })
  return {
    baselines: [{ name: 'bare sleep-paced loop, no policy (the timer)', run: async () => sample((bare = loop('bare'))) }],
    rows: [
      { name: `chunked control, chunks of ${h.flags.chunk ?? 50}, threshold 0.5`, run: async () => sample(loop('chunked'), bare), target: 0.99 },
      { name: 'one blocking request per step (the client before)', run: async () => sample(loop('per-step'), bare) },
    ],
    rounds: h.settings.rounds || 3,
  }
})
