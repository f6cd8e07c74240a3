// What runs on the robot for one manifest: which robot clients the package ships and which policy server, if any,
// runs beside them. Every other runtime file (launch.sh, Dockerfile, compose.yaml, README.md) follows this plan.
import { imageLines } from '../../api/edge-packages/image-lines'
import type { PackageManifest, WireProtocol } from '../../api/edge-packages/manifest'

/** LeRobot's release whose async inference (`lerobot.async_inference.robot_client` / `policy_server`) is shipped. */
export const LEROBOT_VERSION = '0.4.4'
/** openpi's commit whose serving image (scripts/docker/serve_policy.Dockerfile) and command local openpi packages run. */
export const OPENPI_COMMIT = '15a9616a00943ada6c20a0f158e3adb39df2ccac'

/** local mode: the policy server beside the robot client, by model format.
 *  onnx → the package's own onnxruntime server; openpi → openpi's serve_policy.py in openpi's image;
 *  lerobot → LeRobot's async policy_server in the package's image. */
export type LocalServer = 'onnx' | 'openpi' | 'lerobot'

export interface RuntimePlan {
  /** The robot clients shipped, in the manifest's order; launch.sh starts the first unless RCP_PROTOCOL names another. */
  clients: WireProtocol[]
  server: LocalServer | null
  ports: Record<WireProtocol, number | null>
  hasLeRobot: boolean
}

/** A manifest the runtime cannot serve. The build fails with this message and must not be retried. */
export class RuntimeFilesError extends Error {
  override name = 'RuntimeFilesError'
}

const serverProtocol: Record<LocalServer, WireProtocol> = { onnx: 'openpi-ws', openpi: 'openpi-ws', lerobot: 'lerobot-grpc' }

export function runtimePlan(manifest: PackageManifest): RuntimePlan {
  const clients = manifest.wireProtocols.map((p) => p.name)
  const port = (name: WireProtocol) => manifest.wireProtocols.find((p) => p.name === name)?.port ?? null
  const hasLeRobot = imageLines[manifest.targetArch].hasLeRobot
  if (clients.length === 0) throw new RuntimeFilesError('the manifest names no wire protocol')
  if (clients.includes('lerobot-grpc') && !hasLeRobot)
    throw new RuntimeFilesError(`lerobot-grpc is not shipped on the ${manifest.targetArch} image line (no LeRobot there)`)
  if (manifest.mode === 'remote_ws' && !manifest.remotePolicy) throw new RuntimeFilesError('remote_ws needs remotePolicy host and port')
  const server = manifest.mode === 'local' ? manifest.modelVersion.format : null
  if (server && !clients.includes(serverProtocol[server]))
    throw new RuntimeFilesError(`local ${server} models are served over ${serverProtocol[server]}: add it to wireProtocols`)
  return { clients, server, ports: { 'openpi-ws': port('openpi-ws'), 'lerobot-grpc': port('lerobot-grpc') }, hasLeRobot }
}
