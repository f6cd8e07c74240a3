// Robot-side tests run under every Python the robot side runs on (ROBOT_PYTHONS). Apart from python-venv.ts, which
// benchmarks import too, because bun:test exists only inside the test runner.
import { beforeAll, describe, expect, test } from 'bun:test'
import { pythonVenvOn, ROBOT_PYTHONS } from '../../scripts/python-venv'

/** `describe(name)` once per robot Python, named with its version: before its tests, `use` gets the interpreter of a
 *  venv of `requirements` on that Python, and the block's first test checks that it is that Python. */
export function describeOnRobotPythons(name: string, requirements: string[], use: (python: string) => void, body: () => void) {
  describe.each([...ROBOT_PYTHONS])(`${name} (Python %s)`, (version) => {
    let python = ''
    beforeAll(async () => use((python = await pythonVenvOn(version, ...requirements))), 600_000)
    test(`its venv runs Python ${version}`, async () => {
      const proc = Bun.spawn([python, '-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { stdout: 'pipe' })
      expect((await new Response(proc.stdout).text()).trim()).toBe(version)
    })
    body()
  })
}
