// A Python virtual environment with hash-pinned requirements installed, made once and cached under
// ~/.cache/rcp/venv-edge-py<version>-<hash of the requirements> so the edge-package tests (and the Python SDK's
// generator, scripts/python-sdk.ts) pay pip's time only on a new pin set or a new interpreter. It is built in a scratch directory and renamed into place, so a run killed halfway
// never leaves a broken cache.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/** The Pythons the robot side runs on: 3.10 is JetPack 6's (Ubuntu 22.04, the L4T and CUDA image lines), 3.11 the cpu
 *  image's. Robot-side tests run under each. */
export const ROBOT_PYTHONS = ['3.10', '3.11'] as const
export type PythonVersion = (typeof ROBOT_PYTHONS)[number]
const DEFAULT_PYTHON: PythonVersion = '3.11'

const building = new Map<string, Promise<string>>()
const interpreters = new Map<PythonVersion, Promise<string>>()

/** Runs a command to its end; its stdout, or an error carrying both streams. */
export async function run(cmd: string[], env: Record<string, string> = {}): Promise<string> {
  const proc = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, PIP_FIND_LINKS: '', ...env } })
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  if (code !== 0) throw new Error(`${cmd.join(' ')} exited ${code}\n${out}\n${err}`)
  return out
}

/** The real interpreter of `python<version>`: found on PATH (a system python3.10) or through pyenv's shims, which
 *  answer for an installed version only when PYENV_VERSION names it (the machine image installs 3.10 and 3.11 so). */
function interpreter(version: PythonVersion): Promise<string> {
  const known = interpreters.get(version)
  if (known) return known
  const found = run([`python${version}`, '-c', 'import sys; print(sys.executable); print("%d.%d" % sys.version_info[:2])'], { PYENV_VERSION: version })
    .catch((err) => {
      throw new Error(
        `Python ${version} is not installed, and the robot-side tests run under each of ${ROBOT_PYTHONS.join(', ')} (pyenv install ${version}):\n${err}`,
      )
    })
    .then((out) => {
      const [executable, actual] = out.trim().split('\n')
      if (actual !== version) throw new Error(`python${version} is Python ${actual}`)
      return executable!
    })
  interpreters.set(version, found)
  return found
}

/** The venv's python for these requirements files (installed together with `--require-hashes`) on Python 3.11. */
export const pythonVenv = (...requirements: string[]) => pythonVenvOn(DEFAULT_PYTHON, ...requirements)

/** The venv's python for these requirements files on the given Python. */
export function pythonVenvOn(version: PythonVersion, ...requirements: string[]): Promise<string> {
  const hash = createHash('sha256')
  for (const file of requirements) hash.update(readFileSync(file))
  return venvAt(`venv-edge-py${version}-${hash.digest('hex').slice(0, 16)}`, version, [
    '--require-hashes',
    '--no-deps',
    ...requirements.flatMap((file) => ['-r', file]),
  ])
}

/** The venv's python with LeRobot `lerobotVersion` and its async extra installed by version, as a package's
 *  Dockerfile installs it (its torch tree is not hash-pinned): about 8 GB and 8 minutes the first time. */
export function lerobotVenvOn(version: PythonVersion, lerobotVersion: string): Promise<string> {
  return venvAt(`venv-edge-lerobot-${lerobotVersion}-py${version}`, version, [`lerobot[async]==${lerobotVersion}`])
}

function venvAt(name: string, version: PythonVersion, pipArgs: string[]): Promise<string> {
  const dir = join(homedir(), '.cache', 'rcp', name)
  const python = join(dir, 'bin', 'python')
  const pending = building.get(dir)
  if (pending) return pending
  const made = (async () => {
    if (existsSync(python)) return python
    const scratch = `${dir}.tmp-${process.pid}`
    rmSync(scratch, { recursive: true, force: true })
    mkdirSync(join(homedir(), '.cache', 'rcp'), { recursive: true })
    // The venv is created at its final path name's sibling and moved: venv scripts embed their own path, so the
    // interpreter is always run as `<dir>/bin/python -m ...`, never through the scripts.
    await run([await interpreter(version), '-m', 'venv', scratch])
    await run([join(scratch, 'bin', 'python'), '-m', 'pip', 'install', '--quiet', ...pipArgs])
    // Another test process (files run in parallel) may have finished the same venv meanwhile: its copy stands.
    try {
      renameSync(scratch, dir)
    } catch (err) {
      if (!existsSync(python)) throw err
      rmSync(scratch, { recursive: true, force: true })
    }
    return python
  })()
  building.set(dir, made)
  return made
}
