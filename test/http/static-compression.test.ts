// Our pages' static files go compressed to a client that takes gzip: the API reference's script is 1.7 MB as it is.
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { acceptsGzip } from '../../api/http/static-asset'
import { useApi } from '../support/api'

const api = useApi()
const ROOT = join(import.meta.dir, '..', '..')

/** The bytes as they came over the wire, not as fetch would decode them. */
async function raw(path: string, acceptEncoding: string) {
  const res = await fetch(`${api.url}${path}`, { headers: { 'accept-encoding': acceptEncoding }, decompress: false })
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) }
}

describe('static files of our pages', () => {
  test('Accept-Encoding: gzip and * take gzip unless q=0; other codings do not', () => {
    expect(acceptsGzip('gzip, deflate, br, zstd')).toBe(true)
    expect(acceptsGzip('br;q=1.0, GZIP;q=0.5')).toBe(true)
    expect(acceptsGzip('*')).toBe(true)
    expect(acceptsGzip('gzip;q=0')).toBe(false)
    expect(acceptsGzip('gzip; q=0.000, identity')).toBe(false)
    expect(acceptsGzip('*;q=0')).toBe(false)
    expect(acceptsGzip('br, deflate')).toBe(false)
    expect(acceptsGzip('')).toBe(false)
    expect(acceptsGzip(null)).toBe(false)
  })

  test('the API reference script goes gzip-compressed to a client that takes it, and as it is to one that does not', async () => {
    const file = readFileSync(join(ROOT, 'node_modules', 'swagger-ui-dist', 'swagger-ui-bundle.js'))
    const zipped = await raw('/v1/docs/swagger-ui-bundle.js', 'gzip, deflate, br')
    expect(zipped.res.status).toBe(200)
    expect(zipped.res.headers.get('content-encoding')).toBe('gzip')
    expect(zipped.res.headers.get('vary')).toBe('accept-encoding')
    expect(zipped.res.headers.get('content-security-policy')).toContain("script-src 'self'")
    expect(Buffer.from(Bun.gunzipSync(zipped.bytes)).equals(file)).toBe(true)
    expect(zipped.bytes.length).toBeLessThan(file.length * 0.4)

    const plain = await raw('/v1/docs/swagger-ui-bundle.js', 'identity')
    expect(plain.res.headers.get('content-encoding')).toBeNull()
    expect(plain.res.headers.get('vary')).toBe('accept-encoding')
    expect(Buffer.from(plain.bytes).equals(file)).toBe(true)
  })

  test("the console's script is compressed once and served the same to every client that takes gzip", async () => {
    const page = await (await fetch(`${api.url}/console`)).text()
    const script = page.match(/src="(\/console\/assets\/[^"]+\.js)"/)?.[1]
    expect(script).toBeDefined()
    const file = readFileSync(join(ROOT, 'api', 'console', 'dist', 'assets', script!.split('/').at(-1)!))
    const [a, b] = await Promise.all([raw(script!, 'gzip'), raw(script!, 'gzip')])
    expect(a.res.headers.get('content-encoding')).toBe('gzip')
    expect(a.res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(Buffer.from(a.bytes).equals(Buffer.from(b.bytes))).toBe(true)
    expect(Buffer.from(Bun.gunzipSync(a.bytes)).equals(file)).toBe(true)
  })

  test('a file under 1 KiB goes as it is', async () => {
    const small = await raw('/v1/docs/init.js', 'gzip')
    expect(small.res.headers.get('content-encoding')).toBeNull()
    expect(small.res.headers.get('vary')).toBeNull()
    expect(Buffer.from(small.bytes).equals(readFileSync(join(ROOT, 'api', 'docs', 'init.js')))).toBe(true)
  })
})
