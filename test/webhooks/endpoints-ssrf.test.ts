// Server-side request forgery through a webhook URL: with the outbound allow-list off (production), a URL that
// lands on our own network, a cloud metadata service or anything not public is refused at registration, with a
// VALIDATION_ERROR on body.url that never echoes an address the host resolved to.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startApi, type TestApi } from '../support/api'
import { tenantOwner } from '../support/fixtures'

let strict: TestApi // allow-list off, as in production
let lenient: TestApi // the test platform's allow-list (loopback let through), as the other webhook tests run

beforeAll(async () => {
  strict = await startApi({ OUTBOUND_ALLOW_HOSTS: '', OUTBOUND_ALLOW_PRIVATE_CIDRS: '' })
  lenient = await startApi({ OUTBOUND_ALLOW_PRIVATE_CIDRS: '127.0.0.0/8,::1/128' })
})
afterAll(async () => {
  await strict?.stop()
  await lenient?.stop()
})

const register = async (api: TestApi, url: string) => {
  const owner = await tenantOwner(api.url)
  const res = await owner.client.post('/webhook-endpoints', { url, events: ['run.finished'] })
  const [row] = await api.sql<{ n: number }[]>`select count(*)::int as n from webhook_endpoints where tenant_id = ${owner.tenantId}`
  return { owner, res, stored: row!.n }
}

const HOSTS = [
  ['loopback', 'https://127.0.0.1/hook'],
  ['loopback, another address of the range', 'https://127.8.9.10:8443/hook'],
  ['decimal loopback', 'https://2130706433/hook'],
  ['private 10/8', 'https://10.0.0.5/hook'],
  ['private 192.168/16', 'https://192.168.1.1/hook'],
  ['private 172.16/12', 'https://172.20.0.1/hook'],
  ['cloud metadata', 'https://169.254.169.254/latest/meta-data/'],
  ['link-local', 'https://169.254.10.10/hook'],
  ['CGNAT', 'https://100.64.0.1/hook'],
  ['IPv6 loopback', 'https://[::1]/hook'],
  ['IPv4-mapped IPv6 loopback', 'https://[::ffff:127.0.0.1]/hook'],
  ['IPv6 unique-local', 'https://[fd12:3456::1]/hook'],
  ['IPv6 link-local', 'https://[fe80::1]/hook'],
  ['multicast', 'https://224.0.0.251/hook'],
  ['unspecified', 'https://0.0.0.0/hook'],
] as const

describe('registration refuses internal destinations (allow-list off)', () => {
  test('the attack first: where loopback is allow-listed (the test platform), a loopback URL registers', async () => {
    const { res, stored } = await register(lenient, 'https://127.0.0.1/hook')
    expect(res.status).toBe(201)
    expect(stored).toBe(1)
  })

  for (const [name, url] of HOSTS) {
    test(`${name}: ${url} is a VALIDATION_ERROR on body.url and nothing is stored`, async () => {
      const { res, stored } = await register(strict, url)
      expect(res.status).toBe(400)
      expect(res.json.code).toBe('VALIDATION_ERROR')
      expect(res.json.errors).toEqual([{ path: 'body.url', message: expect.stringMatching(/not a public one|public addresses only/) }])
      expect(stored).toBe(0)
    })
  }

  test('a name that resolves to loopback (localhost) is refused without saying what it resolved to', async () => {
    const { res, stored } = await register(strict, 'https://localhost:8443/hook')
    expect(res.status).toBe(400)
    expect(res.json.errors).toEqual([{ path: 'body.url', message: 'its host must resolve to public addresses only' }])
    expect(res.text).not.toMatch(/127\.0\.0\.1|::1|loopback/)
    expect(stored).toBe(0)
  })

  test('cloud metadata stays refused even where private ranges are allow-listed', async () => {
    const { res } = await register(lenient, 'https://169.254.169.254/latest/meta-data/')
    expect(res.status).toBe(400)
    expect(res.json.errors[0].path).toBe('body.url')
  })

  test('a host that does not resolve, and credentials in the URL, are refused too', async () => {
    const unresolvable = await register(strict, 'https://no-such-host.invalid/hook')
    expect(unresolvable.res.status).toBe(400)
    expect(unresolvable.res.json.errors).toEqual([{ path: 'body.url', message: 'its host does not resolve' }])
    const userinfo = await register(lenient, 'https://user:pw@127.0.0.1/hook')
    expect(userinfo.res.status).toBe(400)
    expect(userinfo.res.json.errors[0].path).toBe('body.url')
  })

  test('PATCH cannot move an endpoint inward either', async () => {
    const { owner, res } = await register(lenient, 'https://127.0.0.1/hook')
    const id = res.json.data.endpoint.id
    for (const url of ['https://169.254.169.254/latest/', 'https://10.0.0.1/', 'http://127.0.0.1/hook']) {
      const moved = await owner.client.patch(`/webhook-endpoints/${id}`, { url })
      expect({ url, status: moved.status, path: moved.json.errors?.[0]?.path }).toEqual({ url, status: 400, path: 'body.url' })
    }
    expect((await owner.client.get(`/webhook-endpoints/${id}`)).json.data.url).toBe('https://127.0.0.1/hook')
  })
})
