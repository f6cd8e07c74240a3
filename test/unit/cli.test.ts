// The command line's logic without the platform: the device flow's polling against a stand-in answering as the
// OpenAPI document says the API does (the interval, slow_down adding 5 s, pending, expired, denied, the token stored and
// not printed), the tar reader on archives GNU tar writes (ustar, pax and GNU long names) and on hostile ones, and
// the package checks' rules that the end-to-end test (test/clients/cli.test.ts) does not reach.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import { Flags, parseArgs } from '../../clients/cli/args'
import { makeCommand } from '../../clients/cli/context'
import { DENIED_MESSAGE, deviceLogin, EXPIRED_MESSAGE, SLOW_DOWN_STEP_S } from '../../clients/cli/device-login'
import { CliError, EXIT } from '../../clients/cli/exit'
import type { Output } from '../../clients/cli/output'
import { TarFormatError, TarReader } from '../../clients/cli/tar-reader'
import { verifyPackage } from '../../clients/cli/verify'

const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'cli-unit-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

function capture(): Output & { notes: string[]; results: unknown[] } {
  const notes: string[] = []
  const results: unknown[] = []
  return {
    json: true,
    verbose: false,
    notes,
    results,
    result: (data) => void results.push(data),
    note: (line) => void notes.push(line),
    debug: () => {},
    progress: () => ({ update: () => {}, finish: () => {} }),
  }
}

describe('rcp login (the device flow) against the contract', () => {
  const TOKEN = 'rcp_pat_devicegranted0123456789'
  let answers: { status: number; body: unknown }[] = []
  let polls = 0
  let server: ReturnType<typeof Bun.serve>
  let started: unknown
  const problem = (code: string, error: string) => ({ status: 400, body: { code, error, status: 400, title: 'Bad Request', requestId: 'r' } })

  beforeAll(() => {
    server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: async (req) => {
        const path = new URL(req.url).pathname
        if (path === '/v1/device/authorizations') {
          started = await req.json()
          return Response.json(
            {
              data: {
                deviceCode: 'dc-1',
                userCode: 'WDJB-MJHT',
                verificationUri: 'http://console.example/device',
                verificationUriComplete: 'http://console.example/device?code=WDJB-MJHT',
                expiresIn: 600,
                interval: 5,
              },
            },
            { status: 201 },
          )
        }
        if (path === '/v1/device/tokens') {
          expect(await req.json()).toEqual({ deviceCode: 'dc-1' })
          const a = answers[polls++]!
          return Response.json(a.body, { status: a.status, headers: a.status === 200 ? {} : { 'content-type': 'application/problem+json' } })
        }
        if (req.headers.get('authorization') !== `Bearer ${TOKEN}`) return Response.json({ code: 'UNAUTHORIZED' }, { status: 401 })
        if (path === '/v1/tokens/self')
          return Response.json({
            data: { tenantId: 't-1', credentialClass: 'personal_access_token', expiresAt: '2027-01-01T00:00:00.000Z', effectivePermissions: [] },
          })
        if (path === '/v1/users/me')
          return Response.json({ data: { user: { email: 'a@example.test' }, currentMembership: { tenantSlug: 'acme' }, memberships: [] } })
        return new Response(null, { status: 404 })
      },
    })
  })
  afterAll(() => server.stop(true))

  const login = async (sequence: typeof answers) => {
    answers = sequence
    polls = 0
    const home = mkdtempSync(join(dir, 'home-'))
    process.env.XDG_CONFIG_HOME = home
    const out = capture()
    const waits: number[] = []
    const cmd = makeCommand([], new Flags(parseArgs(['--api', `http://127.0.0.1:${server.port}`], new Set())), out)
    const outcome = await deviceLogin(cmd, { clientName: 'rcp test', scopes: ['model:read'], sleep: async (ms) => void waits.push(ms) }).then(
      () => null,
      (e) => e,
    )
    delete process.env.XDG_CONFIG_HOME
    return { out, waits, outcome, home }
  }

  test('prints the code and the URL, polls at the interval, adds 5 s on slow_down, stores the token (0600) without printing it', async () => {
    const ok = {
      status: 200,
      body: { data: { token: TOKEN, tokenType: 'Bearer', expiresAt: '2027-01-01T00:00:00.000Z', tenantId: 't-1', scopes: ['model:read'] } },
    }
    const { out, waits, outcome, home } = await login([
      problem('DEVICE_AUTHORIZATION_PENDING', 'authorization_pending'),
      problem('DEVICE_SLOW_DOWN', 'slow_down'),
      problem('DEVICE_AUTHORIZATION_PENDING', 'authorization_pending'),
      ok,
    ])
    expect(outcome).toBeNull()
    expect(started).toEqual({ clientName: 'rcp test', scopes: ['model:read'] })
    expect(waits).toEqual([5000, 5000, (5 + SLOW_DOWN_STEP_S) * 1000, (5 + SLOW_DOWN_STEP_S) * 1000])
    expect(out.notes.join('\n')).toContain('http://console.example/device?code=WDJB-MJHT')
    expect(out.notes.join('\n')).toContain('WDJB-MJHT')
    expect(out.results).toEqual([expect.objectContaining({ signedIn: true, tenantSlug: 'acme', credentialClass: 'personal_access_token' })])
    expect(JSON.stringify(out)).not.toContain(TOKEN)
    const file = join(home, 'rcp', 'config.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(join(home, 'rcp')).mode & 0o777).toBe(0o700)
    expect(JSON.parse(readFileSync(file, 'utf8')).credentials[0].token).toBe(TOKEN)
  })

  test('expired and denied stop polling with the auth exit code, and store nothing', async () => {
    for (const [code, error, message] of [
      ['DEVICE_CODE_EXPIRED', 'expired_token', EXPIRED_MESSAGE],
      ['DEVICE_ACCESS_DENIED', 'access_denied', DENIED_MESSAGE],
    ] as const) {
      const { outcome, waits, home } = await login([problem('DEVICE_AUTHORIZATION_PENDING', 'authorization_pending'), problem(code, error)])
      expect(outcome).toBeInstanceOf(CliError)
      expect((outcome as CliError).exitCode).toBe(EXIT.auth)
      expect((outcome as CliError).message).toBe(message)
      expect(waits).toHaveLength(2)
      expect(() => statSync(join(home, 'rcp', 'config.json'))).toThrow()
    }
  })
})

describe('the tar reader', () => {
  const read = (archive: string) => {
    const files: Record<string, string> = {}
    let name = ''
    const reader = new TarReader({
      file: (n) => {
        name = n
        files[n] = ''
      },
      data: (c) => {
        files[name] += Buffer.from(c).toString('utf8')
      },
      end: () => {},
      folder: () => {},
    })
    const bytes = gunzipSync(readFileSync(archive))
    // fed in uneven pieces, as a download arrives
    for (let at = 0; at < bytes.length; at += 313) reader.write(bytes.subarray(at, at + 313))
    reader.finish()
    return files
  }
  const tar = (src: string, ...args: string[]) => {
    const out = join(dir, `${crypto.randomUUID()}.tar.gz`)
    const r = Bun.spawnSync(['tar', ...args, '-czf', out, '-C', src, '.'])
    if (r.exitCode !== 0) throw new Error(r.stderr.toString())
    return out
  }

  test('reads what GNU tar writes, long names included, in ustar, pax and gnu formats', () => {
    const src = mkdtempSync(join(dir, 'src-'))
    const long = `model/${'deep/'.repeat(30)}weights.bin`
    mkdirSync(join(src, long, '..'), { recursive: true })
    writeFileSync(join(src, long), 'weights')
    writeFileSync(join(src, 'SHA256SUMS'), 'sums')
    writeFileSync(join(src, 'empty'), '')
    for (const format of ['pax', 'gnu']) expect(read(tar(src, `--format=${format}`))).toEqual({ [long]: 'weights', SHA256SUMS: 'sums', empty: '' })
  })

  test('refuses links, names that leave the folder, and an archive cut short', () => {
    const src = mkdtempSync(join(dir, 'src-'))
    writeFileSync(join(src, 'a'), 'a')
    symlinkSync('/etc/passwd', join(src, 'link'))
    expect(() => read(tar(src))).toThrow(TarFormatError)
    const outside = mkdtempSync(join(dir, 'src-'))
    writeFileSync(join(outside, 'x'), 'x')
    const out = join(dir, 'escape.tar.gz')
    expect(Bun.spawnSync(['tar', '-czf', out, '-P', '--transform', 's|^x$|../x|', '-C', outside, 'x']).exitCode).toBe(0)
    expect(() => read(out)).toThrow('unsafe entry name "../x"')
    const ok = mkdtempSync(join(dir, 'src-'))
    writeFileSync(join(ok, 'big'), 'y'.repeat(5000))
    const whole = gunzipSync(readFileSync(tar(ok)))
    const reader = new TarReader({ file: () => {}, data: () => {}, end: () => {}, folder: () => {} })
    reader.write(whole.subarray(0, 2048))
    expect(() => reader.finish()).toThrow('the archive ends inside an entry')
  })
})

describe('the package checks', () => {
  test('a file the package holds but SHA256SUMS does not list is refused, as is a SHA256SUMS that lists a missing one', () => {
    const digests = new Map([
      ['model/a', 'a'.repeat(64)],
      ['provenance.intoto.jsonl', 'b'.repeat(64)],
      ['SHA256SUMS', 'c'.repeat(64)],
      ['extra.sh', 'd'.repeat(64)],
    ])
    const sums = Buffer.from(`${'a'.repeat(64)}  model/a\n${'b'.repeat(64)}  provenance.intoto.jsonl\n`)
    expect(() => verifyPackage(digests, { sums, provenance: Buffer.from('{}') }, [])).toThrow('extra.sh is in the package but not in SHA256SUMS')
    digests.delete('extra.sh')
    digests.delete('model/a')
    expect(() => verifyPackage(digests, { sums, provenance: Buffer.from('{}') }, [])).toThrow('SHA256SUMS lists model/a, which the package does not hold')
  })
})
