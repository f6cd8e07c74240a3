// A Python virtual environment with hash-pinned requirements installed, made once and cached under
// ~/.cache/rcp/venv-edge-<hash of the requirements> so the edge-package tests pay pip's time only on a new pin set.
// It is built in a scratch directory and renamed into place, so a run killed halfway never leaves a broken cache.
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

const building = new Map<string, Promise<string>>()

async function run(cmd: string[]): Promise<void> {
  const proc = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, PIP_FIND_LINKS: '' } })
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()])
  if (code !== 0) throw new Error(`${cmd.join(' ')} exited ${code}\n${out}\n${err}`)
}

/** The venv's python for these requirements files (installed together with `--require-hashes`). */
export function pythonVenv(...requirements: string[]): Promise<string> {
  const hash = createHash('sha256')
  for (const file of requirements) hash.update(readFileSync(file))
  const dir = join(homedir(), '.cache', 'rcp', `venv-edge-${hash.digest('hex').slice(0, 16)}`)
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
    await run([process.env.RCP_TEST_PYTHON ?? 'python3', '-m', 'venv', scratch])
    const pip = [join(scratch, 'bin', 'python'), '-m', 'pip', 'install', '--quiet', '--require-hashes', '--no-deps']
    await run([...pip, ...requirements.flatMap((file) => ['-r', file])])
    if (!existsSync(python)) renameSync(scratch, dir)
    else rmSync(scratch, { recursive: true, force: true })
    return python
  })()
  building.set(dir, made)
  return made
}
