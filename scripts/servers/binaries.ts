// The Go-built servers (Temporal CLI, MinIO), built or found by scripts/setup-servers.sh.
import { join } from 'node:path'
import { REPO_ROOT } from '../env'

let binaries: Promise<{ temporal: string; minio: string }> | undefined

/** The Go-built servers from scripts/setup-servers.sh, which owns their versions (warm cache: milliseconds). */
export function serverBinaries() {
  binaries ??= (async () => {
    const proc = Bun.spawn(['bash', join(REPO_ROOT, 'scripts', 'setup-servers.sh'), 'all'], { stdout: 'pipe', stderr: 'inherit' })
    const out = await new Response(proc.stdout).text()
    if ((await proc.exited) !== 0) throw new Error('scripts/setup-servers.sh failed')
    const [temporal, minio] = out.trim().split('\n').slice(-2)
    if (!temporal || !minio) throw new Error(`unexpected output from scripts/setup-servers.sh: ${out}`)
    return { temporal, minio }
  })()
  return binaries
}
