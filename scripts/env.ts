// What the run scripts, tests and benchmarks share about this checkout and machine.
import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const REPO_ROOT = join(import.meta.dir, '..')
export const CACHE_DIR = process.env.RCP_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(process.env.HOME ?? tmpdir(), '.cache'), 'rcp')

/** A fresh SECRET_KEY as config.ts wants it: 32 random bytes, base64. */
export const newSecretKey = () => randomBytes(32).toString('base64')

export const seconds = (sinceMs: number) => `${((performance.now() - sinceMs) / 1000).toFixed(1)}s`

/** What the outbound guard lets through on the test and development platforms: servers on this machine. */
export const LOOPBACK_CIDRS = '127.0.0.0/8,::1/128'
