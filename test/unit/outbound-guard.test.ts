// The outbound guard (api/platform/outbound) against real sockets: which destinations it refuses, that it never
// follows a redirect, and that the connection goes to the address it checked (DNS rebinding cannot slip through).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer as createHttps, type Server as HttpsServer } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../api/platform/config'
import { guardedFetch, guardedFetchApi, OutboundFailed } from '../../api/platform/outbound/fetch'
import { checkUrl, OutboundRefused } from '../../api/platform/outbound/guard'
import { outboundPolicy, type OutboundPolicy, type Resolver } from '../../api/platform/outbound/policy'
import { newSecretKey } from '../../scripts/env'

// What loadConfig requires and these tests never reach: no server runs in the fast tier.
const REQUIRED = { DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused', SECRET_KEY: newSecretKey() }
const OFF = { OUTBOUND_ALLOW_HOSTS: [], OUTBOUND_ALLOW_PRIVATE_CIDRS: [], OUTBOUND_CA_FILE: undefined }
const strict = outboundPolicy(OFF)
const allowing = (cidrs: string[], extra: Partial<OutboundPolicy> = {}) => outboundPolicy({ ...OFF, OUTBOUND_ALLOW_PRIVATE_CIDRS: cidrs }, extra)
/** A resolver that answers each call with the next list, the last one forever after; it counts its calls. */
function scripted(...answers: string[][]): Resolver & { calls: number } {
  const r = Object.assign(
    async (_host: string) => {
      const list = answers[Math.min(r.calls++, answers.length - 1)]!
      return list.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) }))
    },
    { calls: 0 },
  )
  return r
}

async function refusal(url: string, policy: OutboundPolicy = strict): Promise<string | null> {
  try {
    await checkUrl(url, policy)
    return null
  } catch (err) {
    if (!(err instanceof OutboundRefused)) throw err
    return err.reason
  }
}

describe('refused destinations', () => {
  const refused: [string, string][] = [
    ['http://127.0.0.1/', 'loopback'],
    ['http://127.255.255.254/', 'loopback'],
    ['http://[::1]/', 'loopback'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://0.1.2.3/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://10.1.2.3/', 'private'],
    ['http://172.16.0.1/', 'private'],
    ['http://172.31.255.255/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://169.254.1.1/', 'link-local'],
    ['http://[fe80::1]/', 'link-local'],
    ['http://100.64.0.1/', 'cgnat'],
    ['http://100.127.255.255/', 'cgnat'],
    ['http://[fc00::1]/', 'unique-local'],
    ['http://[fd12:3456::1]/', 'unique-local'],
    ['http://224.0.0.1/', 'multicast'],
    ['http://239.255.255.250/', 'multicast'],
    ['http://[ff02::1]/', 'multicast'],
    ['http://240.0.0.1/', 'reserved'],
    ['http://255.255.255.255/', 'reserved'],
    ['http://[100::1]/', 'reserved'],
    ['http://[2001::1]/', 'reserved'],
    ['http://169.254.169.254/latest/meta-data/', 'metadata'],
    ['http://[fd00:ec2::254]/', 'metadata'],
    ['http://100.100.100.200/', 'metadata'],
    ['http://192.0.2.1/', 'documentation'],
    ['http://198.51.100.1/', 'documentation'],
    ['http://203.0.113.1/', 'documentation'],
    ['http://198.18.0.1/', 'documentation'],
    ['http://[2001:db8::1]/', 'documentation'],
    // IPv6 forms that carry an IPv4 address are judged by that address.
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[::ffff:169.254.169.254]/', 'metadata'],
    ['http://[::ffff:10.0.0.1]/', 'private'],
    ['http://[::127.0.0.1]/', 'loopback'],
    ['http://[64:ff9b::10.0.0.1]/', 'private'],
    ['http://[64:ff9b::7f00:1]/', 'loopback'],
    ['http://[2002:a9fe:a9fe::1]/', 'metadata'],
    // Other spellings of 127.0.0.1 that the WHATWG URL parser normalises.
    ['http://2130706433/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://127.1/', 'loopback'],
  ]
  for (const [url, why] of refused) test(`${url} is refused as ${why}`, async () => expect(await refusal(url)).toBe(why))

  const open = [
    'http://8.8.8.8/',
    'https://1.1.1.1/',
    'http://[2606:4700:4700::1111]/',
    'http://[::ffff:8.8.8.8]/',
    'http://[64:ff9b::808:808]/',
    'http://172.32.0.1/',
    'http://100.128.0.1/',
    'http://192.169.0.1/',
  ]
  for (const url of open) test(`${url} (public) passes`, async () => expect(await refusal(url)).toBeNull())

  test('only http and https, never credentials in the URL', async () => {
    expect(await refusal('ftp://8.8.8.8/')).toBe('scheme')
    expect(await refusal('file:///etc/passwd')).toBe('scheme')
    expect(await refusal('gopher://8.8.8.8:70/')).toBe('scheme')
    expect(await refusal('http://user:pw@8.8.8.8/')).toBe('userinfo')
    expect(await refusal('not a url')).toBe('invalid-url')
  })

  test('every resolved address is checked: one private answer among public ones refuses the host', async () => {
    const resolve = scripted(['93.184.215.14', '10.0.0.5'])
    expect(await refusal('https://mixed.example/', outboundPolicy(OFF, { resolve }))).toBe('private')
    expect(await refusal('https://mapped.example/', outboundPolicy(OFF, { resolve: scripted(['::ffff:127.0.0.1']) }))).toBe('loopback')
    expect(await refusal('https://nothing.example/', outboundPolicy(OFF, { resolve: scripted([]) }))).toBe('unresolvable')
    expect(await refusal('http://localhost/')).toBe('loopback') // the system resolver
  })

  test('the error names the reason class, never the address', async () => {
    const err = await checkUrl('http://internal.example/', outboundPolicy(OFF, { resolve: scripted(['10.20.30.40']) })).catch((e) => e)
    expect(err).toBeInstanceOf(OutboundRefused)
    expect(err.message).toBe('outbound request refused: private')
    expect(err.detail).toContain('10.20.30.40') // for the server log
  })
})

describe('allow-list', () => {
  test('off by default; a CIDR or a host lets private addresses through, cloud metadata never', async () => {
    const config = loadConfig({ ...REQUIRED, OUTBOUND_ALLOW_HOSTS: undefined, OUTBOUND_ALLOW_PRIVATE_CIDRS: undefined })
    expect([config.OUTBOUND_ALLOW_HOSTS, config.OUTBOUND_ALLOW_PRIVATE_CIDRS]).toEqual([[], []])
    expect(await refusal('http://localhost/', outboundPolicy(config))).toBe('loopback')
    const loopback = allowing(['127.0.0.0/8', '::1/128'])
    expect(await refusal('http://localhost/', loopback)).toBeNull()
    expect(await refusal('http://[::ffff:127.0.0.1]/', loopback)).toBeNull()
    expect(await refusal('http://10.0.0.1/', loopback)).toBe('private')
    const named = outboundPolicy({ ...OFF, OUTBOUND_ALLOW_HOSTS: ['idp.internal'] }, { resolve: scripted(['10.0.0.7']) })
    expect(await refusal('https://idp.internal/', named)).toBeNull()
    expect(await refusal('https://other.internal/', named)).toBe('private')
    expect(await refusal('http://169.254.169.254/', allowing(['169.254.0.0/16']))).toBe('metadata')
    expect(
      await refusal('http://md.internal/', outboundPolicy({ ...OFF, OUTBOUND_ALLOW_HOSTS: ['md.internal'] }, { resolve: scripted(['169.254.169.254']) })),
    ).toBe('metadata')
    expect(() => loadConfig({ ...REQUIRED, OUTBOUND_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8,nonsense' })).toThrow('OUTBOUND_ALLOW_PRIVATE_CIDRS')
    expect(() => loadConfig({ ...REQUIRED, OUTBOUND_CA_FILE: '/nonexistent/ca.pem' })).toThrow('OUTBOUND_CA_FILE')
  })
})

describe('requests over real sockets', () => {
  const hits: Record<string, string[]> = { good: [], evil: [] }
  let good: ReturnType<typeof Bun.serve>
  let evil: ReturnType<typeof Bun.serve>
  beforeAll(() => {
    good = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: async (req) => {
        const url = new URL(req.url)
        hits.good!.push(`${req.method} ${url.pathname} host=${req.headers.get('host')}`)
        if (url.pathname === '/redirect') return new Response(null, { status: 302, headers: { location: url.searchParams.get('to')! } })
        if (url.pathname === '/big') return new Response('x'.repeat(2000))
        if (url.pathname === '/slow') return new Promise<Response>(() => {})
        return new Response(`good ${await req.text()}`, { headers: { 'x-from': 'good' } })
      },
    })
    // Same port on another loopback address: where a second resolution would send the request.
    evil = Bun.serve({
      port: good.port,
      hostname: '127.0.0.2',
      fetch: (req) => {
        hits.evil!.push(new URL(req.url).pathname)
        return new Response('evil')
      },
    })
  })
  afterAll(() => {
    good?.stop(true)
    evil?.stop(true)
  })
  const onlyGood = (resolve?: Resolver) => allowing(['127.0.0.1/32'], resolve ? { resolve } : {})

  test('connects to the checked address, never to a second resolution (Bun honours the pinned lookup)', async () => {
    hits.good = []
    hits.evil = []
    const resolve = scripted(['127.0.0.1'], ['127.0.0.2'])
    // rebind.invalid exists in no DNS: the request can only arrive if the socket used the address we checked.
    const res = await guardedFetch(`http://rebind.invalid:${good.port}/hello`, { method: 'POST', body: 'ping' }, { policy: onlyGood(resolve) })
    expect(res.status).toBe(200)
    expect(res.body.toString()).toBe('good ping')
    expect(res.headers.get('x-from')).toBe('good')
    expect(resolve.calls).toBe(1)
    expect(hits.good).toEqual([`POST /hello host=rebind.invalid:${good.port}`])
    expect(hits.evil).toEqual([])
    // The other order: the first answer is refused, so the later (allowed) one is never asked for or used.
    const flipped = scripted(['127.0.0.2'], ['127.0.0.1'])
    expect(await guardedFetch(`http://rebind.invalid:${good.port}/`, {}, { policy: onlyGood(flipped) }).catch((e) => e.reason)).toBe('loopback')
    expect(flipped.calls).toBe(1)
    expect([hits.good.length, hits.evil]).toEqual([1, []])
  })

  test('a redirect is handed back, never followed', async () => {
    hits.evil = []
    const to = `http://127.0.0.2:${evil.port}/inside`
    const res = await guardedFetch(`http://127.0.0.1:${good.port}/redirect?to=${encodeURIComponent(to)}`, {}, { policy: onlyGood() })
    expect([res.status, res.headers.get('location')]).toEqual([302, to])
    const viaFetchApi = await guardedFetchApi({ policy: onlyGood() })(`http://127.0.0.1:${good.port}/redirect?to=${encodeURIComponent(to)}`, { method: 'GET' })
    expect(viaFetchApi.status).toBe(302)
    expect(hits.evil).toEqual([])
  })

  test('the body is capped, the whole exchange is timed, and the caller can give up', async () => {
    const big = await guardedFetch(`http://127.0.0.1:${good.port}/big`, {}, { policy: onlyGood(), maxBodyBytes: 1000 }).catch((e) => e)
    expect([big instanceof OutboundFailed, big.reason]).toEqual([true, 'too-large'])
    const slow = await guardedFetch(`http://127.0.0.1:${good.port}/slow`, {}, { policy: onlyGood(), timeoutMs: 200 }).catch((e) => e)
    expect([slow instanceof OutboundFailed, slow.reason]).toEqual([true, 'timeout'])
    const caller = new AbortController()
    setTimeout(() => caller.abort(), 50)
    const given = await guardedFetch(`http://127.0.0.1:${good.port}/slow`, {}, { policy: onlyGood(), signal: caller.signal }).catch((e) => e)
    expect([given instanceof OutboundFailed, given.reason]).toEqual([true, 'aborted'])
  })
})

describe('https with a test-made CA (OUTBOUND_CA_FILE), verification on', () => {
  let dir: string
  let server: HttpsServer
  let port: number
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rcp-outbound-'))
    const made = Bun.spawnSync([
      'openssl',
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-keyout',
      join(dir, 'key.pem'),
      '-out',
      join(dir, 'cert.pem'),
      '-subj',
      '/CN=idp.test',
      '-addext',
      'subjectAltName=DNS:idp.test',
    ])
    if (made.exitCode !== 0) throw new Error(`openssl: ${made.stderr.toString()}`)
    server = createHttps({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (req, res) => {
      res.end(`sni=${(req.socket as { servername?: string }).servername} host=${req.headers.host}`)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as { port: number }).port
  })
  afterAll(() => {
    server?.close()
    rmSync(dir, { recursive: true, force: true })
  })
  const policy = (caFile?: string) =>
    outboundPolicy({ ...OFF, OUTBOUND_ALLOW_PRIVATE_CIDRS: ['127.0.0.1/32'], OUTBOUND_CA_FILE: caFile }, { resolve: scripted(['127.0.0.1']) })

  test("the certificate is checked against the URL's hostname while the socket goes to the checked address", async () => {
    const res = await guardedFetch(`https://idp.test:${port}/`, {}, { policy: policy(join(dir, 'cert.pem')) })
    expect(res.body.toString()).toBe(`sni=idp.test host=idp.test:${port}`)
    const untrusted = await guardedFetch(`https://idp.test:${port}/`, {}, { policy: policy() }).catch((e) => e)
    expect([untrusted instanceof OutboundFailed, untrusted.reason]).toEqual([true, 'network'])
    const wrongName = await guardedFetch(`https://other.test:${port}/`, {}, { policy: policy(join(dir, 'cert.pem')) }).catch((e) => e)
    expect([wrongName instanceof OutboundFailed, wrongName.reason]).toEqual([true, 'network'])
    expect(wrongName.detail).toMatch(/altname|does not match/i)
  })
})
