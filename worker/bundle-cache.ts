/**
 * Workflow bundles kept on disk between worker starts (WORKFLOW_BUNDLE_CACHE_DIR). Bundling a queue's workflows
 * with webpack costs seconds of CPU per module, paid again by every worker process: the test suite and `up` start
 * many. A bundle is named by the SHA-256 of everything that goes into it, so a changed source is a new name.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker'

const require = createRequire(import.meta.url)
const versionOf = (pkg: string) => (require(`${pkg}/package.json`) as { version: string }).version

/** Workflow modules import only their own folder and @temporalio (the architecture test holds them to it), so the
 *  folder's files, the SDK's version, the runtime and the interceptor modules are the whole input. */
export function bundleKey(workflowsPath: string, interceptorModules: string[]): string {
  const h = createHash('sha256')
  const dir = dirname(workflowsPath)
  h.update(`${workflowsPath}\0${interceptorModules.join('\0')}\0${versionOf('@temporalio/workflow')}\0${process.versions.bun ?? process.versions.node}\0`)
  for (const m of interceptorModules) h.update(readFileSync(m))
  for (const name of readdirSync(dir).sort()) {
    h.update(`${name}\0`)
    h.update(readFileSync(join(dir, name)))
  }
  return h.digest('hex')
}

/** A bundle no worker has started from for this long is removed when a new one is written: every edit of a workflow
 *  source names a new file, and the old ones would otherwise pile up. */
export const UNUSED_BUNDLE_MS = 7 * 86_400_000

export async function cachedBundle(
  dir: string,
  workflowsPath: string,
  interceptorModules: string[],
  build: () => Promise<WorkflowBundleWithSourceMap>,
): Promise<WorkflowBundleWithSourceMap> {
  const file = join(dir, `${bundleKey(workflowsPath, interceptorModules)}.json`)
  try {
    const cached = JSON.parse(readFileSync(file, 'utf8')) as WorkflowBundleWithSourceMap
    const now = new Date()
    try {
      utimesSync(file, now, now)
    } catch {
      /* a read-only cache (an image's) is still read */
    }
    return cached
  } catch {
    /* not there yet, or torn by a crash before the rename: build it */
  }
  const bundle = await build()
  try {
    mkdirSync(dir, { recursive: true })
    // Several workers start at once: each writes its own temporary file and the rename replaces whole files only.
    const tmp = `${file}.${process.pid}.tmp`
    writeFileSync(tmp, JSON.stringify({ code: bundle.code, sourceMap: bundle.sourceMap }))
    renameSync(tmp, file)
    sweepUnused(dir)
  } catch {
    /* a cache that cannot be written costs the next start its bundling, never this start */
  }
  return bundle
}

function sweepUnused(dir: string): void {
  const before = Date.now() - UNUSED_BUNDLE_MS
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    try {
      if (statSync(path).mtimeMs < before) rmSync(path, { force: true })
    } catch {
      /* another worker removed it first */
    }
  }
}
