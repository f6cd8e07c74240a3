// Running an edge package's own runtime from a test: a manifest to start from, the package directory written by
// runtimeFiles() plus manifest.json, its launcher run as a real process, and a receiver for the run reports it
// POSTs. Reused by the end-to-end test that builds packages through the API.
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { imageLines } from '../../api/edge-packages/image-lines'
import { DEFAULT_PORTS, type PackageManifest, type RunReport } from '../../api/edge-packages/manifest'
import { runtimeFiles } from '../../activities/edge-package/runtime-files'
import { EdgePackageRunReportDto } from '../../api/edge-packages/model'

const REQUIREMENTS = join(import.meta.dir, '..', '..', 'activities', 'edge-package', 'runtime', 'requirements')
export const requirements = {
  robotClient: join(REQUIREMENTS, 'robot-client.txt'),
  onnxServer: join(REQUIREMENTS, 'onnx-server.txt'),
  onnxMaker: join(import.meta.dir, '..', 'edge-packages', 'requirements', 'onnx-maker.txt'),
}

/** A remote_ws / openpi-ws / cpu manifest with fake transport; override what a test is about. */
export function testManifest(overrides: Partial<PackageManifest> = {}): PackageManifest {
  return {
    schema: 'rcp.edge-package/v1',
    packageId: 'pkg_test_0001',
    modelVersion: { id: 'mv_test', name: 'test policy', format: 'onnx', source: { kind: 'imported_checkpoint', path: 'models/policy.onnx' } },
    embodiment: {
      id: 'emb_test',
      name: 'test arm',
      robotType: 'arm',
      controlRateHz: 50,
      observationFeatures: [
        { name: 'observation/image', dtype: 'uint8', shape: [8, 8, 3], kind: 'image' },
        { name: 'observation/state', dtype: 'float32', shape: [7], kind: 'state' },
      ],
      actionFeatures: [{ name: 'actions', dtype: 'float32', shape: [7], kind: 'action' }],
    },
    mode: 'remote_ws',
    targetArch: 'cpu',
    baseImage: imageLines.cpu.baseImage,
    platform: imageLines.cpu.platform,
    wireProtocols: [{ name: 'openpi-ws', port: DEFAULT_PORTS['openpi-ws'] }],
    remotePolicy: { host: '127.0.0.1', port: DEFAULT_PORTS['openpi-ws'] },
    steps: 10,
    strategyKey: null,
    useFakeTransport: true,
    modelFiles: [],
    apiBase: 'http://127.0.0.1:9',
    ...overrides,
  }
}

/** The package as it lands on the robot, minus SHA256SUMS and the signature: runtime files, manifest.json, model/. */
export function writePackageDir(manifest: PackageManifest, model: Record<string, Uint8Array> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'rcp-edge-'))
  for (const file of runtimeFiles(manifest)) {
    mkdirSync(dirname(join(dir, file.path)), { recursive: true })
    writeFileSync(join(dir, file.path), file.content)
    chmodSync(join(dir, file.path), file.mode)
  }
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2))
  for (const [name, bytes] of Object.entries(model)) {
    mkdirSync(dirname(join(dir, 'model', name)), { recursive: true })
    writeFileSync(join(dir, 'model', name), bytes)
  }
  return dir
}

export interface Finished {
  code: number
  stdout: string
  stderr: string
}

export async function runProcess(cmd: string[], options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Finished> {
  const proc = Bun.spawn(cmd, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdout: 'pipe', stderr: 'pipe' })
  const timer = setTimeout(() => proc.kill('SIGKILL'), options.timeoutMs ?? 120_000)
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  clearTimeout(timer)
  return { code, stdout, stderr }
}

/** Runs the package's launch.sh with the venv's python; unthrottled, since tests never wait on the control rate. */
export function launchPackage(dir: string, python: string, env: Record<string, string> = {}): Promise<Finished> {
  return runProcess(['bash', join(dir, 'launch.sh')], { cwd: dir, env: { RCP_PYTHON: python, RCP_MAX_HZ: '0', RCP_CONNECT_TIMEOUT_S: '60', ...env } })
}

export interface RunReceiver {
  url: string
  reports: { path: string; authorization: string | null; body: RunReport }[]
  /** Reports the API's schema (EdgePackageRunReportDto) would refuse, with why; answered 400 as the API would. */
  refused: { body: unknown; issues: string }[]
  stop(): void
}

/** A plain HTTP server standing in for the API's run endpoint when a test has no API: it holds reports to the
 *  API's own request schema. */
export function startRunReceiver(): RunReceiver {
  const reports: RunReceiver['reports'] = []
  const refused: RunReceiver['refused'] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const body = await req.json()
      reports.push({ path: new URL(req.url).pathname, authorization: req.headers.get('authorization'), body: body as RunReport })
      const parsed = EdgePackageRunReportDto.safeParse(body)
      if (parsed.success) return Response.json({ data: { id: `run_${reports.length}` } }, { status: 201 })
      refused.push({ body, issues: JSON.stringify(parsed.error.issues) })
      return Response.json({ code: 'VALIDATION_ERROR' }, { status: 400 })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, reports, refused, stop: () => void server.stop(true) }
}

/** A port nothing listens on right now, below the ephemeral range (scripts/ports.ts). */
export { freePortSync as freePort } from '../../scripts/ports'
