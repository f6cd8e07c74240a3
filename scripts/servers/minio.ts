// MinIO: the S3 endpoint of development and tests.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigSchema } from '../../api/platform/config'
import { httpOk, spawnChild, waitUntil, type Child } from '../supervisor'
import { serverBinaries } from './binaries'

/** MinIO's root account is the API's default S3 credential, so a fresh checkout needs no configuration. */
export const S3_ACCESS_KEY = ConfigSchema.shape.S3_ACCESS_KEY.parse(undefined)
export const S3_SECRET_KEY = ConfigSchema.shape.S3_SECRET_KEY.parse(undefined)

export interface MinioServer {
  endpoint: string
  consoleUrl: string
  accessKey: string
  secretKey: string
  child: Child
  stop(): Promise<void>
}

export interface MinioOptions {
  /** Objects go to <dataDir>/data, TLS material (none) to <dataDir>/certs instead of ~/.minio. */
  dataDir: string
  port: number
  consolePort: number
  logFile: string
}

export async function startMinio(opts: MinioOptions): Promise<MinioServer> {
  const { minio } = await serverBinaries()
  const data = join(opts.dataDir, 'data')
  const certs = join(opts.dataDir, 'certs')
  mkdirSync(data, { recursive: true })
  mkdirSync(certs, { recursive: true })
  const child = spawnChild('minio', {
    cmd: [minio, 'server', data, '--address', `127.0.0.1:${opts.port}`, '--console-address', `127.0.0.1:${opts.consolePort}`, '--certs-dir', certs],
    env: { ...process.env, MINIO_ROOT_USER: S3_ACCESS_KEY, MINIO_ROOT_PASSWORD: S3_SECRET_KEY, MINIO_UPDATE: 'off' },
    logFile: opts.logFile,
  })
  const endpoint = `http://127.0.0.1:${opts.port}`
  await waitUntil(child, 'GET /minio/health/live', httpOk(`${endpoint}/minio/health/live`))
  return {
    endpoint,
    consoleUrl: `http://127.0.0.1:${opts.consolePort}`,
    accessKey: S3_ACCESS_KEY,
    secretKey: S3_SECRET_KEY,
    child,
    stop: () => child.stop(),
  }
}
