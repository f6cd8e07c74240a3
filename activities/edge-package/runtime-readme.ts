// The package's README.md: what a robot engineer needs to run this one package, written from its manifest.
import { imageLines } from '../../api/edge-packages/image-lines'
import type { PackageManifest } from '../../api/edge-packages/manifest'
import type { Feature } from '../../api/embodiment-profiles/model'
import { UNPRINTABLE } from '../../api/platform/text'
import { requirementsFile } from './runtime-container'
import { PICKLE_WARNING } from './runtime-launch'
import type { RuntimePlan } from './runtime-plan'

const UNPRINTABLE_ALL = new RegExp(UNPRINTABLE.source, 'g')
/** A tenant's name as inline Markdown that shows exactly that text: every ASCII punctuation character behind a
 *  backslash (CommonMark shows `\x` as `x`), and what the API refuses in a name today (line breaks, controls, bidi
 *  overrides), should an older row hold it, as its visible \uXXXX code. No name can end a line or open a heading,
 *  a link, HTML or emphasis. */
const md = (name: string) => name.replace(/[!-/:-@[-`{-~]/g, '\\$&').replace(UNPRINTABLE_ALL, (c) => `\\\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

const features = (list: Feature[]) => list.map((f) => `- \`${f.name}\`: ${f.dtype} [${f.shape.join(', ')}]${f.kind ? ` (${f.kind})` : ''}`)

const serverText: Record<NonNullable<RuntimePlan['server']>, string> = {
  onnx: "`runtime/onnx_policy_server.py` serves `model/` with onnxruntime (CPU provider) over openpi's websocket protocol on 127.0.0.1 only. ONNX inputs are fed the observation features of the same names, ONNX outputs become the action features of the same names (a batch axis of 1 is added and removed when the model has one).",
  openpi:
    "openpi's own policy server runs in its own container (compose service `policy-server`): clone github.com/Physical-Intelligence/openpi beside this directory (or set OPENPI_DIR), check out the commit named in compose.yaml, and set OPENPI_CONFIG if the compose default is not your checkpoint's training config. Its port is published on 127.0.0.1 only.",
  lerobot: "LeRobot's async `policy_server` runs beside LeRobot's `robot_client` in the same container, bound to 127.0.0.1.",
}

export function packageReadme(m: PackageManifest, plan: RuntimePlan): string {
  const line = imageLines[m.targetArch]
  const requirements = requirementsFile(plan)
  const where = m.mode === 'remote_ws' ? `the remote policy server at ${m.remotePolicy?.host}:${m.remotePolicy?.port}` : 'a policy server on this device'
  const out = [
    '# Edge package',
    '',
    'Its id is `packageId` in `manifest.json` (every other file but the checksums and the provenance is the same for two packages built from the same request).',
    `Model version ${md(m.modelVersion.name)} (${m.modelVersion.id}, format ${m.modelVersion.format}) for the embodiment ${md(m.embodiment.name)} (${md(m.embodiment.robotType)}, ${m.embodiment.controlRateHz} Hz).`,
    `Target ${m.targetArch}: ${line.description}, base image \`${m.baseImage}\` (${m.platform}). Mode ${m.mode}: the robot client talks to ${where}.`,
    `Wire protocols: ${m.wireProtocols.map((p) => `${p.name} on port ${p.port}`).join(', ')}. ${m.useFakeTransport ? `Fake transport: the client drives ${m.steps} synthetic observations instead of hardware.` : `Real transport: ${m.steps} steps on the robot.`}`,
    '',
    '## Check it',
    '`sha256sum -c SHA256SUMS` checks every file; the DSSE envelope beside it is signed with the platform key published by the API.',
    '',
    '## Run it',
    '- Docker: `RCP_TOKEN=<token> docker compose up --build` (the token only enables the run report; it is never stored in the package).',
    requirements
      ? `- Without Docker (Python 3.10 to 3.12): \`python3 -m venv .venv && .venv/bin/pip install --require-hashes --no-deps -r ${requirements}\`, then \`RCP_PYTHON=.venv/bin/python RCP_TOKEN=<token> ./launch.sh\`.`
      : '- Without Docker: install the LeRobot release named in the Dockerfile into a venv, then `RCP_PYTHON=.venv/bin/python ./launch.sh`.',
    plan.server ? `- Policy server: ${serverText[plan.server]}` : `- The policy must already be served at ${m.remotePolicy?.host}:${m.remotePolicy?.port}.`,
    '',
    '## The contract',
    'Observation features (what the robot sends):',
    ...features(m.embodiment.observationFeatures),
    'Action features (what the policy must answer):',
    ...features(m.embodiment.actionFeatures),
    '',
    'Every action chunk is checked: each action feature must come back with its exact dtype and either its shape or the shape with one leading chunk dimension ([H, ...shape], H >= 1). The first mismatch stops the client with exit code 2 and one line naming the feature, what was expected and what came back.',
  ]
  if (plan.clients.includes('openpi-ws'))
    out.push(
      '',
      '## The openpi robot client',
      '`runtime/robot_client.py` (openpi-client 0.1.2). Without fake transport it reads and drives the robot through `runtime/robot_io.py`: fill in its two functions for your hardware; they are the only robot-specific code.',
      'Control: one inference per action chunk; its actions are applied one per tick at the control rate, and the next chunk is requested while the queue still holds RCP_CHUNK_THRESHOLD of one (default 0.5). Overlapping actions are merged by RCP_AGGREGATION: `replace` (the newest chunk wins, default) or `weighted` (0.3 queued + 0.7 newest). A tick whose action came too late repeats the last action and counts an underrun.',
      "Environment: RCP_API_BASE (default: the manifest's apiBase), RCP_TOKEN, RCP_SEED, RCP_MAX_HZ (0 = unthrottled), RCP_CHUNK_THRESHOLD, RCP_AGGREGATION, RCP_CONNECT_TIMEOUT_S (retry the policy server this long; default 60, 900 beside openpi's own server), RCP_OPEN_TIMEOUT_S (one websocket opening, default 10), RCP_PING_INTERVAL_S and RCP_PING_TIMEOUT_S (websocket keepalive, default 20 and 300; 0 turns it off), RCP_PORT (local mode: moves the policy server and the client together), RCP_ACTIONS_OUT (one JSON line per step), RCP_PROTOCOL. Run directly, `runtime/robot_client.py` takes each setting as a flag too (e.g. `--chunk-threshold 0.3`).",
      'Exit codes: 0 completed, 2 contract violation, 3 policy server error, 4 connection lost, 5 not runnable (real transport not wired, or a bad setting), 130 interrupted. Each run is reported (steps, inferences, underruns, queue depth, control-loop jitter p99, round-trip latency p50/p99, violations, exit reason) to RCP_API_BASE with RCP_TOKEN as its bearer token; a failed report is logged, not fatal.',
    )
  if (plan.clients.includes('lerobot-grpc'))
    out.push(
      '',
      "## LeRobot's async robot_client",
      `**Warning:** ${PICKLE_WARNING}`,
      m.mode === 'remote_ws'
        ? `Open the tunnel first, e.g. \`ssh -N -L ${plan.ports['lerobot-grpc']}:127.0.0.1:${plan.ports['lerobot-grpc']} <policy host>\`, with the remote policy_server bound to its 127.0.0.1.`
        : 'Both ends run in this container on 127.0.0.1.',
      "Set LEROBOT_ROBOT_ARGS to your robot's LeRobot flags (for example `--robot.type=so100_follower --robot.port=/dev/ttyACM0 --robot.id=arm`) and run with `RCP_PROTOCOL=lerobot-grpc` when the package ships both clients. LEROBOT_POLICY_TYPE, LEROBOT_ACTIONS_PER_CHUNK, LEROBOT_POLICY_DEVICE and LEROBOT_TASK override the defaults in `lerobot/robot_client.sh`.",
    )
  return `${out.join('\n')}\n`
}
