// One composition root (api/compose.ts): each process holds one Temporal client, made there, and api/http imports
// only the domains it uses, not the ones it used to wire.
import { describe, expect, test } from 'bun:test'
import { Glob } from 'bun'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..', '..')
const sourcesOf = async (pattern: string) => {
  const files = await Array.fromAsync(new Glob(pattern).scan({ cwd: ROOT }))
  return Promise.all(files.sort().map(async (file) => ({ file, src: await Bun.file(join(ROOT, file)).text() })))
}

/** Where a Temporal connection or client is made, as `file: what` once per occurrence. */
function temporalClientsMade(files: { file: string; src: string }[]): string[] {
  const made: string[] = []
  for (const { file, src } of files) {
    for (const m of src.matchAll(/\bnew (TemporalClient|Client)\(|\b(NativeConnection|Connection)\.connect\(/g))
      made.push(`${file}: ${m[1] ?? `${m[2]}.connect`}`)
  }
  return made
}

describe('one composition root', () => {
  test("the server makes Temporal clients in three places: the lazy client itself, compose (one per process) and the worker's connection", async () => {
    const server = await sourcesOf('{api,worker,activities,workflows}/**/*.ts')
    expect(temporalClientsMade(server)).toEqual([
      'api/compose.ts: TemporalClient',
      'api/platform/temporal.ts: Connection.connect',
      'api/platform/temporal.ts: Client',
      'worker/run.ts: NativeConnection.connect',
      'worker/run.ts: Client',
    ])
  })

  test('the check sees a second client (so a green result means something)', () => {
    expect(
      temporalClientsMade([
        { file: 'api/health/probes.ts', src: 'const conn = await Connection.connect({ address })' },
        { file: 'worker/deps.ts', src: 'const temporal = new TemporalClient(config)' },
      ]),
    ).toEqual(['api/health/probes.ts: Connection.connect', 'worker/deps.ts: TemporalClient'])
  })

  test('api/http imports only the domains it uses (who the caller is, idempotency, budgets), none it would only wire', async () => {
    const imported = new Set<string>()
    for (const { src } of await sourcesOf('api/http/**/*.ts')) {
      for (const m of src.matchAll(/from\s+['"]\.\.\/([^/'"]+)\//g)) imported.add(m[1]!)
    }
    expect([...imported].sort()).toEqual(['credentials', 'idempotency', 'identity', 'platform', 'rate-budgets'])
  })
})
