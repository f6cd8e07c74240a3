import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'

// There is no Docker engine where the suite runs; docker-compose still validates the file for real
// (schema, interpolation, depends_on), which catches the mistakes that otherwise surface only at deploy.
const ROOT = join(import.meta.dir, '..')
const compose = Bun.which('docker-compose')

function run(...args: string[]) {
  if (!compose) throw new Error('docker-compose is not on PATH (scripts/bootstrap.sh installs it with apt when run as root)')
  // SECRET_KEY has no default in the file on purpose; any value satisfies the interpolation check.
  const env = { ...process.env, SECRET_KEY: Buffer.alloc(32, 1).toString('base64') }
  const proc = Bun.spawnSync([compose, '-f', 'docker-compose.yml', ...args], { cwd: ROOT, env })
  return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() }
}

type Service = { image?: string; build?: unknown; command?: string[]; healthcheck?: unknown; depends_on?: Record<string, unknown>; cpu_shares?: number }
let resolved: { services: Record<string, Service> } | undefined
/** The file as docker-compose resolves it (anchors merged, defaults filled), read once for every test. */
const resolvedConfig = () => (resolved ??= Bun.YAML.parse(run('config').stdout) as { services: Record<string, Service> })

describe('docker-compose.yml', () => {
  test('is valid', () => {
    const check = run('config', '-q')
    if (check.code !== 0) throw new Error(`docker-compose config failed:\n${check.stderr}`)
    expect(check.code).toBe(0)
  })

  test('defines every service of the platform, the api and worker from one image', () => {
    const config = resolvedConfig()
    for (const name of ['api', 'worker', 'postgres', 'temporal', 'temporal-ui', 'minio', 'mail', 'migrate']) {
      expect(config.services).toHaveProperty(name)
    }
    const { api, worker } = config.services
    expect(api!.image).toBe(worker!.image!)
    expect(api!.command).toEqual(['bun', 'api/main.ts'])
    expect(worker!.command).toEqual(['bun', 'worker/main.ts'])
    expect(api!.healthcheck).toBeDefined()
    expect(Object.keys(api!.depends_on ?? {})).toContain('migrate')
  })

  test("weights the api's CPU nine times any other service's, as ./scripts/up does", () => {
    const shares = Object.fromEntries(Object.entries(resolvedConfig().services).map(([name, s]) => [name, s.cpu_shares ?? 1024]))
    expect(shares.api).toBe(9 * 1024)
    expect(Object.entries(shares).filter(([name, n]) => name !== 'api' && n !== 1024)).toEqual([])
  })
})
