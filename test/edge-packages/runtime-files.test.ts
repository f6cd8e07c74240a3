// runtimeFiles(manifest): deterministic, chosen by mode / format / arch / wire protocols, ports from the manifest,
// LeRobot's pickle transport kept off public ports; the launchers are valid bash.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { imageLines, targetArchs, type TargetArch } from '../../api/edge-packages/image-lines'
import type { PackageManifest } from '../../api/edge-packages/manifest'
import { RuntimeFilesError, runtimeFiles } from '../../activities/edge-package/runtime-files'
import { LEROBOT_VERSION } from '../../activities/edge-package/runtime-plan'
import { runProcess, testManifest, writePackageDir } from '../support/edge-package'

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const onArch = (arch: TargetArch, overrides: Partial<PackageManifest> = {}) =>
  testManifest({ targetArch: arch, baseImage: imageLines[arch].baseImage, platform: imageLines[arch].platform, ...overrides })
const local = (format: PackageManifest['modelVersion']['format'], overrides: Partial<PackageManifest> = {}) =>
  onArch('x86-cuda', { mode: 'local', remotePolicy: null, modelVersion: { ...testManifest().modelVersion, format }, ...overrides })
const files = (m: PackageManifest) => Object.fromEntries(runtimeFiles(m).map((f) => [f.path, f.content.toString()]))
const lerobotPair = [
  { name: 'lerobot-grpc' as const, port: 9191 },
  { name: 'openpi-ws' as const, port: 8000 },
]

test('the same manifest gives the same bytes, in path order', () => {
  const m = local('onnx', { modelFiles: ['policy.onnx'] })
  const [a, b] = [runtimeFiles(m), runtimeFiles(structuredClone(m))]
  expect(a.map((f) => f.path)).toEqual([...a.map((f) => f.path)].sort())
  expect(a.map((f) => [f.path, f.mode, f.content.toString('base64')])).toEqual(b.map((f) => [f.path, f.mode, f.content.toString('base64')]))
  expect(a.filter((f) => f.mode === 0o755).map((f) => f.path)).toEqual(['launch.sh'])
})

describe('selection by mode and format', () => {
  test('remote_ws ships the robot client only, with the hash-pinned client requirements', () => {
    const f = files(testManifest())
    expect(Object.keys(f)).toEqual([
      'Dockerfile',
      'README.md',
      'compose.yaml',
      'launch.sh',
      'requirements/robot-client.txt',
      'runtime/chunking.py',
      'runtime/contract.py',
      'runtime/robot_client.py',
      'runtime/robot_io.py',
      'runtime/run_report.py',
    ])
    expect(f['launch.sh']).not.toContain('policy_server')
    // Every setting the client takes (robot_client.py's settings()) reaches its container from the shell and is
    // named, with its flag, in the package's README, the client's docstring and this repository's docs/robots.md.
    const settings = [...f['runtime/robot_client.py']!.matchAll(/option\("(--[a-z-]+)", "(RCP_[A-Z_]+)"/g)].map((m) => ({ flag: m[1]!, name: m[2]! }))
    expect(settings.map((o) => o.name)).toEqual([
      'RCP_MAX_HZ',
      'RCP_CHUNK_THRESHOLD',
      'RCP_AGGREGATION',
      'RCP_CONNECT_TIMEOUT_S',
      'RCP_OPEN_TIMEOUT_S',
      'RCP_PING_INTERVAL_S',
      'RCP_PING_TIMEOUT_S',
    ])
    const readme = readFileSync(join(import.meta.dir, '..', '..', 'docs', 'robots.md'), 'utf8')
    for (const { flag, name } of settings) {
      expect(f['compose.yaml']).toContain(`      ${name}: \${${name}:-}\n`)
      expect(f['README.md']).toContain(name)
      expect(f['runtime/robot_client.py']).toContain(`  ${flag} ${name} `)
      expect(readme).toContain(`\`${name}\``)
      expect(readme).toContain(`\`${flag}\``)
    }
    expect(f['README.md']).toContain('the remote policy server at 127.0.0.1:8000')
    expect(f['requirements/robot-client.txt']).toMatch(/^openpi-client==0\.1\.2 \\\n {4}--hash=sha256:/m)
    expect(f['requirements/robot-client.txt']).toMatch(/^typing-extensions==[\d.]+ \\\n {4}--hash=sha256:/m)
  })

  test('local onnx adds its onnxruntime server and installs the server requirements', () => {
    const f = files(local('onnx', { wireProtocols: [{ name: 'openpi-ws', port: 8123 }] }))
    expect(f['runtime/onnx_policy_server.py']).toContain('CPUExecutionProvider')
    expect(f['launch.sh']).toContain('"$PYTHON" runtime/onnx_policy_server.py &')
    expect(f.Dockerfile).toContain('--require-hashes --no-deps -r requirements/onnx-server.txt')
    expect(f['requirements/robot-client.txt']).toBeUndefined()
    expect(f['README.md']).toContain('openpi-ws on port 8123')
  })

  test("local openpi runs openpi's own serving image and command beside the client, on the manifest's port", () => {
    const f = files(local('openpi', { strategyKey: 'pi05_droid', wireProtocols: [{ name: 'openpi-ws', port: 8124 }] }))
    expect(f['compose.yaml']).toContain('dockerfile: scripts/docker/serve_policy.Dockerfile')
    expect(f['compose.yaml']).toContain('--port 8124 policy:checkpoint --policy.config=${OPENPI_CONFIG:-pi05_droid} --policy.dir=/package/model')
    expect(f['launch.sh']).not.toContain('&\n')
  })

  test("local openpi: openpi's server (which binds 0.0.0.0 in its container) is published on the robot's 127.0.0.1 only", () => {
    const compose = Bun.YAML.parse(files(local('openpi', { wireProtocols: [{ name: 'openpi-ws', port: 8124 }] }))['compose.yaml']!) as {
      services: Record<string, { network_mode?: string; ports?: string[] }>
    }
    const server = compose.services['policy-server']!
    expect(server.network_mode).toBeUndefined()
    expect(server.ports).toEqual(['127.0.0.1:8124:8124'])
  })

  test("local lerobot runs LeRobot's async policy_server and robot_client, both on 127.0.0.1 and the manifest's port", () => {
    const f = files(local('lerobot', { wireProtocols: lerobotPair, strategyKey: 'smolvla' }))
    expect(f['lerobot/policy_server.sh']).toContain('-m lerobot.async_inference.policy_server \\\n  --host=127.0.0.1 --port=9191 --fps=50')
    for (const flag of [
      '--server_address="${LEROBOT_SERVER_ADDRESS:-127.0.0.1:9191}"',
      '--policy_type="${LEROBOT_POLICY_TYPE:-smolvla}"',
      '--pretrained_name_or_path=',
      '--actions_per_chunk=',
      '--fps=50',
    ])
      expect(f['lerobot/robot_client.sh']).toContain(flag)
    expect(f.Dockerfile).toContain('"lerobot[async]==0.4.4"')
    expect(Object.values(f).join('\n')).not.toContain('0.0.0.0')
  })

  test("remote LeRobot goes through a tunnel; the pickle warning is in the package's README and launchers", () => {
    const f = files(onArch('jetson-jp6', { wireProtocols: lerobotPair }))
    expect(f['README.md']).toContain('unpickles every message it receives')
    expect(f['README.md']).toContain('ssh -N -L 9191:127.0.0.1:9191')
    expect(f['lerobot/robot_client.sh']).toContain('WARNING: LeRobot')
    expect(f['lerobot/policy_server.sh']).toBeUndefined()
  })

  test('manifests the runtime cannot serve are refused with a reason', () => {
    expect(() => runtimeFiles(testManifest({ wireProtocols: lerobotPair }))).toThrow(RuntimeFilesError)
    expect(() => runtimeFiles(testManifest({ wireProtocols: lerobotPair }))).toThrow('not shipped on the cpu image line')
    expect(() => runtimeFiles(local('lerobot'))).toThrow('served over lerobot-grpc: add it to wireProtocols')
    expect(() => runtimeFiles(testManifest({ remotePolicy: null }))).toThrow('remote_ws needs remotePolicy')
  })
})

test.each([...targetArchs])('%s: the Dockerfile starts FROM its image line and the compose file builds for its platform', (arch) => {
  const f = files(onArch(arch))
  expect(f.Dockerfile!.split('\n').filter((l) => l.startsWith('FROM '))).toEqual([`FROM ${imageLines[arch].baseImage}`])
  expect(f['compose.yaml']).toContain(`platform: ${imageLines[arch].platform}`)
  if (arch === 'jetson-jp6') expect(f['compose.yaml']).toContain('runtime: nvidia')
})

test('every launcher is valid bash; an unknown RCP_PROTOCOL is refused', async () => {
  const dir = writePackageDir(local('lerobot', { wireProtocols: lerobotPair }))
  dirs.push(dir)
  for (const script of ['launch.sh', 'lerobot/robot_client.sh', 'lerobot/policy_server.sh'])
    expect((await runProcess(['bash', '-n', join(dir, script)])).code).toBe(0)
  const remote = writePackageDir(testManifest())
  dirs.push(remote)
  const refused = await runProcess(['bash', join(remote, 'launch.sh')], { env: { RCP_PROTOCOL: 'carrier-pigeon' } })
  expect(refused.code).toBe(5)
  expect(refused.stderr).toContain('RCP_PROTOCOL=carrier-pigeon is not in this package (it ships: openpi-ws)')
})

test.each([
  ['local onnx on cpu', local('onnx', { targetArch: 'cpu', baseImage: imageLines.cpu.baseImage })],
  ['local openpi on x86-cuda', local('openpi', { strategyKey: 'pi05_droid' })],
  ['remote LeRobot on jetson-jp6', onArch('jetson-jp6', { wireProtocols: lerobotPair })],
])('%s: docker-compose validates compose.yaml', async (_, manifest) => {
  const compose = Bun.which('docker-compose')
  if (!compose) throw new Error('docker-compose is not on PATH (scripts/bootstrap.sh installs it)')
  const dir = writePackageDir(manifest)
  dirs.push(dir)
  mkdirSync(join(dir, 'openpi')) // where the README says to check openpi out
  const check = await runProcess([compose, '-f', 'compose.yaml', 'config', '-q'], { cwd: dir })
  expect(check.stderr).toBe('')
  expect(check.code).toBe(0)
})

test("docs/robots.md's table of requirements files is what each mode, format and protocol set installs", () => {
  const readme = readFileSync(join(import.meta.dir, '..', '..', 'docs', 'robots.md'), 'utf8')
  const table = readme.slice(readme.indexOf('| mode, model format | wire protocols | installs |'))
  const tableLines = table.split('\n')
  const rows = tableLines
    .slice(
      2,
      tableLines.findIndex((l) => !l.startsWith('|')),
    )
    .map((l) =>
      l
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim()),
    )
  expect(rows).toHaveLength(6)
  const formats = ['onnx', 'openpi', 'lerobot'] as const
  for (const [modeAndFormat, protocols, installs] of rows) {
    const [mode, format] = modeAndFormat!.replaceAll('`', '').split(', ') as ['local' | 'remote_ws', string]
    const wire = [...protocols!.matchAll(/`([a-z-]+)`/g)].map((p) => p[1]!).filter((p) => !protocols!.includes(`without \`${p}\``))
    const file = /^`(requirements\/[a-z-]+\.txt)`/.exec(installs!)?.[1] ?? null
    expect({ row: modeAndFormat, installs: file === null ? installs!.startsWith('none') : true }).toEqual({ row: modeAndFormat, installs: true })
    // "any" is every format; each row is checked for each format it covers.
    for (const f of format === 'any' ? formats : [format as (typeof formats)[number]]) {
      const base = onArch('x86-cuda', {
        wireProtocols: wire.map((name, i) => ({ name: name as 'openpi-ws', port: 8000 + i })),
        modelVersion: { ...testManifest().modelVersion, format: f },
      })
      const m = mode === 'local' ? { ...base, mode, remotePolicy: null } : base
      const got = files(m)
      expect({ row: `${modeAndFormat} ${protocols}`, format: f, file: Object.keys(got).find((p) => p.startsWith('requirements/')) ?? null }).toEqual({
        row: `${modeAndFormat} ${protocols}`,
        format: f,
        file,
      })
      if (file) expect(got.Dockerfile).toContain(`--require-hashes --no-deps -r ${file}`)
      if (file) expect(got['README.md']).toContain(`-r ${file}\``)
      expect(got.Dockerfile!.includes(`lerobot[async]==${LEROBOT_VERSION}`)).toBe(installs!.includes(`LeRobot ${LEROBOT_VERSION}`))
    }
  }
})
