// The Python SDK (clients/python) against the real platform, from a fresh install: its pinned dependencies in a venv
// cached by their hashes (pip --require-hashes, as the edge venvs), and the SDK itself built and installed by pip into
// this run's own directory, so what runs is the package as a user would install it, never the checkout's sources.
// Then, in Python: the robot engineer's flow (tests/clients/python/flow.py, with AsyncRcpClient's part), the layer's
// mechanics against a stub server (mechanics.py, both clients), and every ```python example of docs/clients.md, run as
// written. And mypy over the SDK's sources and those Python tests, as strict as clients/python/pyproject.toml sets it.
// The API and worker are the webhook tests' (a database of the file's own, a delivery dispatcher, a test CA).
import { beforeAll, describe, expect, test } from 'bun:test'
import { appendFileSync, cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PASSWORD } from '../support/fixtures'
import { pythonVenvOn } from '../../scripts/python-venv'
import { useDeliveryEnv } from '../webhooks/delivery-helpers'

const env = useDeliveryEnv({ WORKER_TASK_QUEUES: '' })
const ROOT = join(import.meta.dir, '..', '..')
const HERE = join(import.meta.dir, 'python')
const SDK_DIR = join(ROOT, 'clients', 'python')
/** The oldest Python the SDK supports (JetPack 6's). */
const PYTHON = '3.10'

const sdk = {} as { python: string; site: string }
const made = {} as { email: string; token: string; profileId: string }

/** Spawned without blocking: the API under test runs in this process. */
async function run(cmd: string[], extra: Record<string, string> = {}, cwd = ROOT) {
  const proc = Bun.spawn(cmd, { cwd, env: { ...process.env, PYTHONPATH: sdk.site, PYTHONDONTWRITEBYTECODE: '1', ...extra }, stdout: 'pipe', stderr: 'pipe' })
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  return { code, stdout, stderr }
}

beforeAll(async () => {
  sdk.python = await pythonVenvOn(PYTHON, join(ROOT, 'clients', 'python', 'requirements.txt'))
  sdk.site = join(env.dir, 'site')
  const pip = await run([
    sdk.python,
    '-m',
    'pip',
    'install',
    '--quiet',
    '--no-index',
    '--no-deps',
    '--no-build-isolation',
    '--target',
    sdk.site,
    join(ROOT, 'clients', 'python'),
  ])
  expect({ code: pip.code, stderr: pip.stderr }).toEqual({ code: 0, stderr: '' })
}, 300_000)

describe('the Python SDK', () => {
  test('is the installed package, on the oldest Python it supports', async () => {
    const where = await run([sdk.python, '-c', 'import sys, rcp_sdk; print(rcp_sdk.__file__); print("%d.%d" % sys.version_info[:2])'])
    expect(where.stdout.trim().split('\n')).toEqual([join(sdk.site, 'rcp_sdk', '__init__.py'), PYTHON])
  })

  test('mechanics against a stub server, sync and async: 429 retried with the same key, 500 not, three pages, problem+json, session, ETag, upload', async () => {
    const ran = await run([sdk.python, join(HERE, 'mechanics.py')])
    expect({ code: ran.code, stderr: ran.stderr.split('\n').filter((l) => /FAIL|ERROR|Error/.test(l)) }).toEqual({ code: 0, stderr: [] })
    expect(JSON.parse(ran.stdout.trim().split('\n').pop()!)).toEqual({ ran: 20, failures: 0 })
  }, 120_000)

  test('register, sign in, tenant, storage, model, package (downloaded, verified, tampered copies refused), webhook test event', async () => {
    const ran = await run([sdk.python, join(HERE, 'flow.py')], {
      RCP_URL: env.api.url,
      RCP_PASSWORD: PASSWORD,
      RCP_SCRATCH: env.dir,
      RCP_CERT_FILE: env.certs.certFile,
      RCP_KEY_FILE: env.certs.keyFile,
    })
    expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: '' })
    const out = JSON.parse(ran.stdout.trim().split('\n').pop()!)
    expect(out.tampered).toEqual({
      untouched: 'accepted',
      file: expect.stringContaining('does not match its SHA-256 in SHA256SUMS'),
      'file and SHA256SUMS': expect.stringContaining('the signed statement names model/'),
      'provenance and SHA256SUMS': 'no signature verifies with a published key',
    })
    expect(out.webhookTampered).toBe('refused')
    expect(out.token).toStartWith('rcp_pat_')
    expect(out.async).toEqual({
      me: out.email,
      keys: 3,
      listedAll: true,
      listed: 4,
      etagChanged: true,
      errors: { stale: [412, 'PRECONDITION_FAILED', true], missing: [404, 'MODEL_VERSION_NOT_FOUND', true] },
    })
    Object.assign(made, out)
  }, 400_000)
})

describe('the Python SDK under mypy', () => {
  /** mypy with clients/python/pyproject.toml's [tool.mypy] settings, run in `dir` (its files, or those named); the
   *  cache is this run's, so nothing from an earlier tree is read. */
  const mypy = async (dir: string, files: string[] = [], extra: Record<string, string> = {}) => {
    const python = await pythonVenvOn(PYTHON, join(SDK_DIR, 'requirements.txt'), join(SDK_DIR, 'typecheck-requirements.txt'))
    const cache = join(env.dir, 'mypy-cache', `${dir}${files.join()}`.replace(/\W/g, '_'))
    return run([python, '-m', 'mypy', '--config-file', join(dir, 'pyproject.toml'), '--cache-dir', cache, ...files], { PYTHONPATH: '', ...extra }, dir)
  }
  const clean = { code: 0, stdout: expect.stringMatching(/^Success: no issues found in \d+ source files\n$/), stderr: '' }

  test('rcp_sdk type-checks under mypy --strict, and so do the tests that call it (the SDK as a caller sees it)', async () => {
    const sdkChecked = await mypy(SDK_DIR)
    expect({ code: sdkChecked.code, stdout: sdkChecked.stdout, stderr: sdkChecked.stderr }).toEqual(clean)
    expect(Number(sdkChecked.stdout.match(/in (\d+) source files/)![1])).toBeGreaterThanOrEqual(13)
    const callers = await mypy(SDK_DIR, [HERE], { MYPYPATH: SDK_DIR })
    expect({ code: callers.code, stdout: callers.stdout, stderr: callers.stderr }).toEqual(clean)
  }, 300_000)

  test('the same check fails on a copy of the SDK with a type error, and on a function strict mode wants annotated', async () => {
    const copy = join(env.dir, 'sdk-ill-typed')
    cpSync(join(SDK_DIR, 'pyproject.toml'), join(copy, 'pyproject.toml'))
    cpSync(join(SDK_DIR, 'rcp_sdk'), join(copy, 'rcp_sdk'), { recursive: true })
    appendFileSync(
      join(copy, 'rcp_sdk', 'client.py'),
      '\n\ndef status_of(answer: Answer) -> int:\n    return answer.response.reason_phrase\n\n\ndef untyped(x):\n    return x\n',
    )
    const checked = await mypy(copy)
    expect(checked.code).toBe(1)
    expect(checked.stdout).toContain('error: Incompatible return value type (got "str", expected "int")  [return-value]')
    expect(checked.stdout).toContain('error: Function is missing a type annotation  [no-untyped-def]')
    expect(checked.stdout).toContain('Found 2 errors in 1 file')
  }, 300_000)
})

/** The ```python blocks of docs/clients.md, in order. */
export function pythonExamples(markdown: string): string[] {
  return [...markdown.matchAll(/^```python\n([\s\S]*?)^```$/gm)].map((m) => m[1]!)
}

describe('docs/clients.md', () => {
  test('every Python example runs as written against the platform', async () => {
    const examples = pythonExamples(readFileSync(join(ROOT, 'docs', 'clients.md'), 'utf8'))
    expect(examples.length).toBeGreaterThanOrEqual(5)
    expect(made.token).toBeDefined()
    for (const [i, source] of examples.entries()) {
      const file = join(env.dir, `docs-example-${i}.py`)
      writeFileSync(file, source)
      const ran = await run([sdk.python, file], { RCP_URL: env.api.url, RCP_TOKEN: made.token, RCP_EMAIL: made.email, RCP_PASSWORD: PASSWORD }, env.dir)
      rmSync(file, { force: true })
      expect({ example: i, code: ran.code, stderr: ran.stderr }).toEqual({ example: i, code: 0, stderr: '' })
      expect(ran.stdout.trim()).not.toBe('')
    }
  }, 300_000)
})
