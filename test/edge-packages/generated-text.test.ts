// Tenant text in generated package files. The rule (docs/robots.md "Tenant text in package files"): a name (profile name,
// robot type, model version name) is refused at the API when it holds a line break, a control or a bidirectional
// override, and is Markdown-escaped in the package README, the one generated file it reaches; identifiers that do
// reach a shell line or the compose file (strategy key, remote host, feature names) are refused unless they match
// their character class. Every usual injection is tried in every field, against every generated file.
import { afterAll, describe, expect, test } from 'bun:test'
import { chmodSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { imageLines } from '../../api/edge-packages/image-lines'
import type { PackageManifest } from '../../api/edge-packages/manifest'
import { EdgeInferencePackageRequestDto } from '../../api/edge-packages/model'
import { FeatureDto } from '../../api/embodiment-profiles/model'
import { runtimeFiles } from '../../activities/edge-package/runtime-files'
import { useApi } from '../support/api'
import { runProcess, testManifest, writePackageDir } from '../support/edge-package'
import { modelWriter } from '../models/support'

const api = useApi()
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** What a name may not hold (a line break, a control, a bidi override): refused by the API from now on. */
const UNPRINTABLE = ['x\n# y', 'x\r\n## y', 'x\ry', 'x\u2028# y', 'x\u2029y', 'x\u0085y', 'x\ty', 'x\u001b[31my', 'x\u202eevil', 'x\u2066y']
/** Printable text with a meaning in Markdown, the shell or YAML: a legitimate name, kept as text everywhere. */
const PRINTABLE = [
  '$(touch /tmp/pwned)',
  '`touch /tmp/pwned`',
  "'; rm -rf ~; echo '",
  '"; exit 1; "',
  'key: {value: [1]}',
  '# not a heading',
  '- [click](javascript:alert(1))',
  '<img src=x onerror=alert(1)>',
  '*bold* _em_ | a | b |',
  '${RCP_TOKEN}',
  'arm \\ #2 & co',
  '&lt;b&gt;',
  '![x](y)',
]
const INJECTIONS = [...UNPRINTABLE, ...PRINTABLE]

const local = (overrides: Partial<PackageManifest>) =>
  testManifest({
    mode: 'local',
    remotePolicy: null,
    targetArch: 'x86-cuda',
    baseImage: imageLines['x86-cuda'].baseImage,
    platform: imageLines['x86-cuda'].platform,
    wireProtocols: [
      { name: 'lerobot-grpc', port: 8080 },
      { name: 'openpi-ws', port: 8000 },
    ],
    ...overrides,
  })
/** A package of every runtime file at once: local lerobot (both LeRobot launchers) shipping the openpi client too. */
const everyFile = (names: { profile: string; robot: string; version: string }, overrides: Partial<PackageManifest> = {}) => {
  const base = local(overrides)
  return {
    ...base,
    embodiment: { ...base.embodiment, name: names.profile, robotType: names.robot },
    modelVersion: { ...base.modelVersion, name: names.version, format: 'lerobot' as const },
  }
}
const PLACEHOLDERS = { profile: 'PROFILENAME', robot: 'ROBOTTYPE', version: 'VERSIONNAME' }
const contents = (m: PackageManifest) => Object.fromEntries(runtimeFiles(m).map((f) => [f.path, f.content.toString()]))

// Line endings as any reader may take them (CommonMark's three, and the Unicode ones editors and renderers honour).
const lines = (s: string) => s.split(/\r\n|\r|\n|\u2028|\u2029|\u0085/)
const blockOf = (line: string) =>
  /^ {0,3}#{1,6}(\s|$)/.test(line)
    ? 'heading'
    : /^ {0,3}([-*+]|\d+[.)])\s/.test(line)
      ? 'list item'
      : line.trim() === ''
        ? 'blank'
        : /^( {4}|\t| {0,3}(```|~~~|>|<|\||[-=_*]{3,}\s*$))/.test(line)
          ? `block ${line.slice(0, 4)}`
          : 'paragraph'
/** The package README's escaping, as docs/robots.md states it: ASCII punctuation behind a backslash, and what a name
 *  may not hold shown as its \uXXXX code (itself escaped). */
const escaped = (s: string) =>
  s
    .replace(/[!-/:-@[-`{-~]/g, '\\$&')
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)

describe('names: refused at the API when they hold what would break a line or reorder it', () => {
  test.each(UNPRINTABLE)('%j as a profile name, robot type (create and change) or model version name: 400 naming the field', async (bad) => {
    const { pat } = await modelWriter(api.url)
    const feature = { name: 'state', dtype: 'float32', shape: [7] }
    const profile = { name: `arm ${crypto.randomUUID()}`, robotType: 'so100', controlRateHz: 30, observationFeatures: [feature], actionFeatures: [feature] }
    const version = { name: 'v1', format: 'onnx', source: { kind: 'imported_checkpoint', path: 'ckpt/policy.onnx' } }
    const refused = async (res: { status: number; json: { code: string; errors: { path: string }[] } }, path: string) => {
      expect({ bad, status: res.status, code: res.json.code }).toEqual({ bad, status: 400, code: 'VALIDATION_ERROR' })
      expect(res.json.errors.map((e) => e.path)).toContain(path)
    }
    await refused(await pat.post('/embodiment-profiles', { ...profile, name: bad }), 'body.name')
    await refused(await pat.post('/embodiment-profiles', { ...profile, robotType: bad }), 'body.robotType')
    const created = await pat.post('/embodiment-profiles', profile)
    expect(created.status).toBe(201)
    await refused(await pat.patch(`/embodiment-profiles/${created.json.data.id}`, { name: bad }), 'body.name')
    await refused(await pat.post('/model-versions', { ...version, name: bad }), 'body.name')
  })

  test('printable names with a meaning elsewhere are names like any other', async () => {
    const { pat } = await modelWriter(api.url)
    const feature = { name: 'state', dtype: 'float32', shape: [7] }
    for (const name of PRINTABLE) {
      const res = await pat.post('/embodiment-profiles', {
        name,
        robotType: name,
        controlRateHz: 30,
        observationFeatures: [feature],
        actionFeatures: [feature],
      })
      expect({ name, status: res.status }).toEqual({ name, status: 201 })
      expect(res.json.data).toMatchObject({ name, robotType: name })
    }
  })

  test('identifiers that reach a shell line or the compose file accept only their character class', () => {
    const request = { embodimentProfileId: crypto.randomUUID(), mode: 'remote_ws', remotePolicyHost: 'gpu.lan', remotePolicyPort: 8000 }
    for (const bad of INJECTIONS) {
      expect({ bad, strategyKey: EdgeInferencePackageRequestDto.safeParse({ ...request, strategyKey: bad }).success }).toEqual({ bad, strategyKey: false })
      expect({ bad, host: EdgeInferencePackageRequestDto.safeParse({ ...request, remotePolicyHost: bad }).success }).toEqual({ bad, host: false })
      expect({ bad, feature: FeatureDto.safeParse({ name: bad, dtype: 'float32', shape: [1] }).success }).toEqual({ bad, feature: false })
    }
  })
})

describe('every generated file keeps its meaning whatever the names hold (rows older than the rule included)', () => {
  const plain = contents(everyFile(PLACEHOLDERS))

  test.each(INJECTIONS)('%j: names reach only the README, escaped; its lines and blocks are those of a plain name', (name) => {
    const names = { profile: `${name} p`, robot: `${name} r`, version: `${name} v` }
    const files = contents(everyFile(names))
    expect(Object.keys(files)).toEqual(Object.keys(plain))
    // Shell scripts, Dockerfile, compose file, Python and requirements: the same bytes as with plain names.
    for (const path of Object.keys(plain).filter((p) => p !== 'README.md')) expect({ path, same: files[path] === plain[path] }).toEqual({ path, same: true })
    const readme = lines(files['README.md']!)
    const expected = lines(
      plain['README.md']!.replaceAll(PLACEHOLDERS.profile, escaped(names.profile))
        .replaceAll(PLACEHOLDERS.robot, escaped(names.robot))
        .replaceAll(PLACEHOLDERS.version, escaped(names.version)),
    )
    expect(readme).toEqual(expected)
    expect(readme.map(blockOf)).toEqual(lines(plain['README.md']!).map(blockOf))
  })

  test('model file paths (object keys) reach manifest.json only, and it reads back exactly', () => {
    const modelFiles = ['$(touch x)/a b\'"`.onnx', 'y\u2028# z.onnx', 'key: {v}.bin']
    const m = everyFile(PLACEHOLDERS, { modelFiles, strategyKey: null })
    expect(contents(m)).toEqual(plain)
    // manifest.json is written as the builder writes it (archive.ts): JSON, so every name and key reads back as sent.
    const named = everyFile({ profile: INJECTIONS.join(''), robot: 'r', version: 'v' }, { modelFiles })
    expect(JSON.parse(`${JSON.stringify(named, null, 2)}\n`)).toEqual(named)
  })

  test("the widest strategy key the API accepts is one argument of the LeRobot client and one word of openpi's command", async () => {
    const key = '-a:b/c@d+e_f.9'
    expect(EdgeInferencePackageRequestDto.safeParse({ embodimentProfileId: crypto.randomUUID(), mode: 'local', strategyKey: key }).success).toBe(true)
    const dir = writePackageDir(everyFile(PLACEHOLDERS, { strategyKey: key }))
    dirs.push(dir)
    for (const script of ['launch.sh', 'lerobot/robot_client.sh', 'lerobot/policy_server.sh'])
      expect((await runProcess(['bash', '-n', join(dir, script)])).code).toBe(0)
    // The client's argv as the shell hands it over: a stand-in interpreter prints it.
    const argv = join(dir, 'argv.py')
    writeFileSync(argv, '#!/usr/bin/env python3\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n')
    chmodSync(argv, 0o755)
    const run = await runProcess(['bash', join(dir, 'lerobot/robot_client.sh')], {
      env: { RCP_PYTHON: argv, LEROBOT_ROBOT_ARGS: '--robot.type=so100_follower --robot.id=arm' },
    })
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual([
      '-m',
      'lerobot.async_inference.robot_client',
      '--server_address=127.0.0.1:8080',
      `--policy_type=${key}`,
      `--pretrained_name_or_path=${dir}/model`,
      '--actions_per_chunk=50',
      '--fps=50',
      '--policy_device=cuda',
      '--task=',
      '--robot.type=so100_follower',
      '--robot.id=arm',
    ])
    const openpi = local({
      strategyKey: key,
      modelVersion: { ...testManifest().modelVersion, format: 'openpi' },
      wireProtocols: [{ name: 'openpi-ws', port: 8000 }],
    })
    const compose = Bun.YAML.parse(contents(openpi)['compose.yaml']!) as { services: Record<string, { environment: Record<string, string> }> }
    expect(compose.services['policy-server']!.environment.SERVER_ARGS!.split(' ')).toEqual([
      '--port',
      '8000',
      'policy:checkpoint',
      `--policy.config=\${OPENPI_CONFIG:-${key}}`,
      '--policy.dir=/package/model',
    ])
  })
})
