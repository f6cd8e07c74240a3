// The files of an edge package besides model/, manifest.json, SHA256SUMS and the signature (the builder adds those):
// the Python runtime (assets under runtime/), its hash-pinned requirements, and the launch script, Dockerfile,
// compose file and README written for this manifest. Same manifest → same bytes, in path order.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { PackageManifest } from '../../api/edge-packages/manifest'
import { composeFile, dockerfile, requirementsFile } from './runtime-container'
import { launchScript, lerobotClientScript, lerobotServerScript } from './runtime-launch'
import { runtimePlan } from './runtime-plan'
import { packageReadme } from './runtime-readme'

export { RuntimeFilesError } from './runtime-plan'

export interface RuntimeFile {
  path: string
  content: Buffer
  mode: number
}

const ASSETS = join(import.meta.dir, 'runtime')
const OPENPI_CLIENT = ['chunking.py', 'contract.py', 'robot_client.py', 'robot_io.py', 'run_report.py']
const EXECUTABLE = 0o755
const REGULAR = 0o644

const asset = (from: string, to: string): RuntimeFile => ({ path: to, content: readFileSync(join(ASSETS, from)), mode: REGULAR })
const text = (path: string, content: string, mode = REGULAR): RuntimeFile => ({ path, content: Buffer.from(content), mode })

export function runtimeFiles(manifest: PackageManifest): RuntimeFile[] {
  const plan = runtimePlan(manifest)
  const files = [
    text('launch.sh', launchScript(manifest, plan), EXECUTABLE),
    text('Dockerfile', dockerfile(manifest, plan)),
    text('compose.yaml', composeFile(manifest, plan)),
    text('README.md', packageReadme(manifest, plan)),
  ]
  if (plan.clients.includes('openpi-ws')) files.push(...OPENPI_CLIENT.map((f) => asset(join('python', f), `runtime/${f}`)))
  if (plan.server === 'onnx') files.push(asset('python/onnx_policy_server.py', 'runtime/onnx_policy_server.py'))
  const requirements = requirementsFile(plan)
  if (requirements) files.push(asset(requirements, requirements))
  if (plan.clients.includes('lerobot-grpc')) files.push(text('lerobot/robot_client.sh', lerobotClientScript(manifest, plan), EXECUTABLE))
  if (plan.server === 'lerobot') files.push(text('lerobot/policy_server.sh', lerobotServerScript(manifest, plan), EXECUTABLE))
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
}
