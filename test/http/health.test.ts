import { describe, expect, test } from 'bun:test'
import { startApi, useApi } from '../support/api'

const api = useApi()

describe('health', () => {
  test('/healthz answers while the process runs; /readyz checks Postgres, Temporal and S3', async () => {
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200)
    const ready = await fetch(`${api.url}/readyz`)
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { postgres: true, temporal: true, s3: true }, credentialCache: { live: true } })
    expect(ready.status).toBe(200)
  })

  test('/readyz is 503 and names the dependency that does not answer', async () => {
    const broken = await startApi({ S3_ENDPOINT: 'http://127.0.0.1:9' })
    try {
      const res = await fetch(`${broken.url}/readyz`)
      expect(res.status).toBe(503)
      expect((await res.json()).checks).toEqual({ postgres: true, temporal: true, s3: false })
    } finally {
      await broken.stop()
    }
  })
})
