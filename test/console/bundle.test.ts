// The console's first load against its budget: at most 150 KiB of compressed script (the size is deterministic, so
// it is asserted; the figure is printed for docs/api.md).
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bundle } from '../../scripts/build-console'

const BUDGET = 150 * 1024

describe('console bundle', () => {
  test('the first load fetches one script of at most 150 KiB gzip', async () => {
    const out = mkdtempSync(join(tmpdir(), 'rcp-console-'))
    try {
      const { script, gzipBytes } = await bundle(out)
      console.log(
        `console first load: ${script}, ${(gzipBytes / 1024).toFixed(1)} KiB gzip (budget ${BUDGET / 1024} KiB, ${((100 * gzipBytes) / BUDGET).toFixed(0)}%)`,
      )
      const html = await Bun.file(join(out, 'index.html')).text()
      expect([...html.matchAll(/<script /g)].length).toBe(1)
      expect(gzipBytes).toBeGreaterThan(0)
      expect(gzipBytes).toBeLessThanOrEqual(BUDGET)
      // docs/api.md's figure stays true (within 4 KiB of what this build measures).
      const readme = await Bun.file(join(import.meta.dir, '..', '..', 'docs', 'api.md')).text()
      const stated = Number(/one script of about (\d+) KiB gzip against a\s+budget of 150 KiB/.exec(readme)?.[1])
      expect(Math.abs(stated - gzipBytes / 1024)).toBeLessThanOrEqual(4)
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  })
})
