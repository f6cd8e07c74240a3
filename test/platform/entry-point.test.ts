// The production entry point as its own process: it must start what the in-process test servers start by hand
// (the PAT cache's feed above all, whose absence would only show as slowness), and stop cleanly on SIGTERM.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, spawnChild, waitUntil, type Child } from '../../scripts/platform'
import { Client } from '../support/client'
import { patFor, tenantOwner } from '../support/fixtures'

let api: Child | undefined
afterAll(async () => {
  await api?.stop()
})

describe('bun api/main.ts', () => {
  test('serves with its PAT cache live, and exits 0 on SIGTERM', async () => {
    const port = await freePort()
    const logFile = join(mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'entry-')), 'api.log')
    api = spawnChild('api', {
      cmd: [process.execPath, 'api/main.ts'],
      env: { ...process.env, PORT: String(port), METRICS_PORT: String(await freePort()), LOG_LEVEL: 'info' },
      logFile,
    })
    const base = `http://127.0.0.1:${port}`
    await waitUntil(api, 'GET /healthz', async () => (await fetch(`${base}/healthz`)).ok, 30_000)
    const owner = await tenantOwner(base)
    const { token } = await patFor(owner.client, ['tenant:read'])
    const onApi = new Client(base).withBearer(token)
    for (let i = 0; i < 3; i++) expect((await onApi.get('/tokens/self')).status).toBe(200)
    const ready = await (await fetch(`${base}/readyz`)).json()
    expect(ready.credentialCache).toEqual({ live: true, entries: 1 })

    process.kill(api.pid, 'SIGTERM')
    expect(await api.exited).toBe(0)
    expect(readFileSync(logFile, 'utf8')).toContain('"msg":"api stopping"')
  })
})
