/**
 * Workflow bundles kept on disk between worker starts (WORKFLOW_BUNDLE_CACHE_DIR). Bundling a queue's workflows
 * with webpack costs seconds of CPU per module, paid again by every worker process: the test suite and `up` start
 * many. A bundle is named by the SHA-256 of everything that goes into it, so a changed source is a new name.
 */
import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
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

export async function cachedBundle(
  dir: string, workflowsPath: string, interceptorModules: string[], build: () => Promise<WorkflowBundleWithSourceMap>,
): Promise<WorkflowBundleWithSourceMap> {
  const file = join(dir, `${bundleKey(workflowsPath, interceptorModules)}.json`)
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as WorkflowBundleWithSourceMap
  } catch { /* not there yet, or torn by a crash before the rename: build it */ }
  const bundle = await build()
  mkdirSync(dir, { recursive: true })
  // Several workers start at once: each writes its own temporary file and the rename replaces whole files only.
  const tmp = `${file}.${process.pid}.tmp`
  writeFileSync(tmp, JSON.stringify({ code: bundle.code, sourceMap: bundle.sourceMap }))
  renameSync(tmp, file)
  return bundle
}
