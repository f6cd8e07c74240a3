// docs/robots.md's download and verification block, run as written against a built package, with the connection to
// storage cut half way through the archive: the download resumes with a ranged GET on the same presigned URL, and
// the archive, every file and the signature verify.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { connect, createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { patFor } from '../support/fixtures'
import { runProcess } from '../support/edge-package'
import { useApiAndTemporal } from '../storage/helpers'
import { makeProfile, makeVersion, modelTenant, packageIn } from './helpers'

const env = useApiAndTemporal()
const dirs: string[] = []
const servers: Server[] = []
afterAll(() => {
  for (const s of servers) s.close()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** The block of docs/robots.md that starts with `PKG=$(curl`: the commands a robot engineer copies. */
function readmeDownloadBlock(): string {
  const readme = readFileSync(join(import.meta.dir, '..', '..', 'docs', 'robots.md'), 'utf8')
  const block = /```sh\n(PKG=\$\(curl[\s\S]*?)```/.exec(readme)
  if (!block) throw new Error('docs/robots.md has no download block starting with PKG=$(curl')
  return block[1]!
}

interface Connection {
  request: string
  bytesToClient: number
}

/** A TCP proxy to `target` whose first connection is cut after `cutAfter` bytes of the answer; later ones pass. */
function cuttingProxy(target: URL, cutAfter: number): Promise<{ port: number; connections: Connection[] }> {
  const connections: Connection[] = []
  const server = createServer((client) => {
    const seen: Connection = { request: '', bytesToClient: 0 }
    const cut = connections.length === 0
    connections.push(seen)
    const upstream = connect(Number(target.port), target.hostname)
    const close = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on('data', (chunk) => {
      seen.request += chunk.toString('latin1')
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      const room = cut ? cutAfter - seen.bytesToClient : chunk.length
      client.write(chunk.subarray(0, room))
      seen.bytesToClient += Math.min(room, chunk.length)
      if (room <= chunk.length && cut) close()
    })
    upstream.on('end', () => client.end())
    client.on('error', close)
    upstream.on('error', close)
  })
  servers.push(server)
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ port: (server.address() as { port: number }).port, connections })))
}

test("docs/robots.md's download resumes after the connection drops half way, and the package verifies", async () => {
  const t = await modelTenant(env.api.url)
  const profileId = await makeProfile(env.api.sql, t.tenantId)
  const version = await makeVersion(env.api.sql, t.tenantId, t.general, { 'policy.onnx': 4 * 2 ** 20 })
  const created = await t.models.post(`/model-versions/${version.id}/edge-inference-package`, {
    embodimentProfileId: profileId,
    mode: 'remote_ws',
    remotePolicyHost: 'gpu.lan',
    remotePolicyPort: 8000,
  })
  expect(created.status).toBe(201)
  const pkg = await packageIn(t.models, created.json.data.id, ['ready'])
  const storage = new URL(pkg.artifact.downloadUrl)
  const half = Math.floor(pkg.artifact.sizeBytes / 2)
  const proxy = await cuttingProxy(storage, half)

  const dir = mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'edge-download-'))
  dirs.push(dir)
  // The block runs unchanged; curl's own configuration routes storage's address through the proxy (Host stays
  // storage's, so the presigned signature holds), as a flaky network between robot and storage would sit there.
  writeFileSync(join(dir, '.curlrc'), `connect-to = ${storage.hostname}:${storage.port}:127.0.0.1:${proxy.port}\n`)
  writeFileSync(join(dir, 'download.sh'), `set -euo pipefail\n${readmeDownloadBlock()}`)
  const { token } = await patFor(t.client, ['model:read'])
  const run = await runProcess(['bash', 'download.sh'], { cwd: dir, env: { API: env.api.url, ID: pkg.id, PAT: token, CURL_HOME: dir } })
  expect(run.stderr).not.toContain('FAILED')
  expect(run.code).toBe(0)

  // Cut once at half the archive, then one ranged GET for the rest on the same URL: resumed, not restarted.
  expect(proxy.connections).toHaveLength(2)
  const [first, second] = proxy.connections as [Connection, Connection]
  expect(first.bytesToClient).toBe(half)
  const range = /\r\nRange: bytes=(\d+)-\r\n/i.exec(second.request)
  expect(range).not.toBeNull()
  expect(Number(range![1])).toBeGreaterThan(0)
  expect(second.bytesToClient).toBeLessThan(pkg.artifact.sizeBytes - Number(range![1]) + 4096) // the rest and its headers only
  expect(second.request.split('\r\n')[0]).toBe(first.request.split('\r\n')[0]) // the same presigned URL
  expect(statSync(join(dir, 'pkg.tar.gz')).size).toBe(pkg.artifact.sizeBytes)

  // The block's checks ran: the archive's SHA-256 from the API, every file, and the signature.
  expect(run.stdout).toContain('pkg.tar.gz: OK')
  expect(run.stdout).toContain('model/policy.onnx: OK')
  expect(run.stdout).toContain('Signature Verified Successfully')
}, 180_000)
