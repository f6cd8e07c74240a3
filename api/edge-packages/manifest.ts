// The contract between the package builder (activities/edge-package) and what runs on the robot (the runtime files
// the package carries): manifest.json has exactly this shape, and the robot-side client reports runs in RunReport's.
import type { Feature } from '../embodiment-profiles/model'
import type { TargetArch } from './image-lines'

export type ModelSource =
  | { kind: 'imported_checkpoint'; path: string }
  | { kind: 'model_bundle'; prefix: string; objects: string[] }
  | { kind: 'training_job'; trainingJobId: string; path: string }

export type WireProtocol = 'openpi-ws' | 'lerobot-grpc'

/** Ports the package's servers listen on unless the request configured others. */
export const DEFAULT_PORTS: Record<WireProtocol, number> = { 'openpi-ws': 8000, 'lerobot-grpc': 8080 }

export interface PackageManifest {
  schema: 'rcp.edge-package/v1'
  packageId: string
  modelVersion: { id: string; name: string; format: 'openpi' | 'lerobot' | 'onnx'; source: ModelSource }
  embodiment: {
    id: string
    name: string
    robotType: string
    controlRateHz: number
    observationFeatures: Feature[]
    actionFeatures: Feature[]
  }
  mode: 'local' | 'remote_ws'
  targetArch: TargetArch
  baseImage: string
  platform: 'linux/amd64' | 'linux/arm64'
  wireProtocols: { name: WireProtocol; port: number }[]
  /** remote_ws only: where the robot client connects. */
  remotePolicy: { host: string; port: number } | null
  steps: number
  strategyKey: string | null
  useFakeTransport: boolean
  /** Model files, relative to `model/` in the archive, sorted. */
  modelFiles: string[]
  /** Where the robot-side client reports runs: `${apiBase}/v1/edge-inference-packages/${packageId}/runs`. The token
   *  is never in the package: the launcher passes RCP_TOKEN from the environment. */
  apiBase: string
}

/** Body of POST /v1/edge-inference-packages/{id}/runs as the robot-side client sends it. */
export interface RunReport {
  stepsDone: number
  /** Round trip of one chunk request, observation sent → action chunk received; null when no chunk came back. */
  latencyMs: { p50: number; p99: number } | null
  contractViolations: number
  /** Action chunks requested: one per chunk, not one per step. Reports of packages built before chunked control
   *  carry none of these four. */
  inferences?: number
  /** Ticks whose action had not arrived in time: the robot held its last action. */
  underruns?: number
  /** Actions queued at each tick, before its action is taken; null when no tick ran. */
  queueDepth?: { max: number; mean: number } | null
  /** How far tick intervals strayed from the control period; null when unthrottled or fewer than two ticks. */
  loopJitterMs?: { p99: number } | null
  /** completed | contract_violation | server_error | connection_lost | not_runnable (real transport not wired) | interrupted */
  exitReason: string
  /** First violations, for the package page: feature name, what the profile expects, what came back. */
  violations: { feature: string; expected: string; got: string }[]
  startedAt: string
  finishedAt: string
}
