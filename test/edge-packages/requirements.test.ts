// The hash-pinned requirements a package carries install on every image line: each pinned version has a wheel for
// the line's Python and CPU architecture, and its hash is in the file (pip download --require-hashes, binaries only).
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { imageLines, targetArchs } from '../../api/edge-packages/image-lines'
import { requirements, runProcess } from '../support/edge-package'
import { pythonVenv } from '../../scripts/python-venv'

/** Python of each line: python:3.11-slim, and Ubuntu 22.04's python3 on the CUDA and L4T r36 lines. */
const pythonOf = { cpu: '3.11', 'x86-cuda': '3.10', 'jetson-jp6': '3.10' } as const
const glibcs = ['2_35', '2_31', '2_28', '2_27', '2_24', '2_17']
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

test.each([...targetArchs])(
  '%s: both requirements files resolve to wheels whose hashes they carry',
  async (arch) => {
    const python = await pythonVenv(requirements.robotClient)
    const machine = imageLines[arch].platform === 'linux/arm64' ? 'aarch64' : 'x86_64'
    for (const file of [requirements.robotClient, requirements.onnxServer]) {
      const dest = mkdtempSync(join(tmpdir(), 'rcp-wheels-'))
      dirs.push(dest)
      const got = await runProcess(
        [
          python,
          '-m',
          'pip',
          'download',
          '--quiet',
          '--only-binary=:all:',
          '--require-hashes',
          '--no-deps',
          '--python-version',
          pythonOf[arch],
          ...glibcs.map((g) => `--platform=manylinux_${g}_${machine}`),
          '--platform=any',
          '-r',
          file,
          '-d',
          dest,
        ],
        { env: { PIP_FIND_LINKS: '' }, timeoutMs: 300_000 },
      )
      expect(got.stderr).not.toContain('ERROR')
      expect(got.code).toBe(0)
      const pinned = (await Bun.file(file).text()).split('\n').filter((l) => /^[a-z0-9_.-]+==/i.test(l)).length
      expect(readdirSync(dest)).toHaveLength(pinned)
    }
  },
  600_000,
)
