// The worker's workflow bundles kept on disk (WORKFLOW_BUNDLE_CACHE_DIR): built once, reused by the next start, and
// never stale: a changed workflow source names a new bundle. The key tests edit a copy of workflows/.
import { describe, expect, test } from 'bun:test'
import { appendFileSync, cpSync, existsSync, mkdtempSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bundleWorkflowCode } from '@temporalio/worker'
import { bundleKey, cachedBundle, UNUSED_BUNDLE_MS } from '../../worker/bundle-cache'

const scratch = () => mkdtempSync(join(process.env.RCP_TEST_DATA_DIR ?? tmpdir(), 'bundle-cache-'))

function copyOfWorkflows() {
  const dir = join(scratch(), 'workflows')
  cpSync(join(import.meta.dir, '..', '..', 'workflows'), dir, { recursive: true })
  return join(dir, 'mail.ts')
}

describe('the workflow bundle cache', () => {
  test('a start with the bundle on disk builds nothing; the bundle it reads is the one built', async () => {
    const cache = scratch()
    const path = join(import.meta.dir, '..', '..', 'workflows', 'mail.ts') // the copy could not resolve @temporalio
    let builds = 0
    const build = async () => {
      builds++
      return bundleWorkflowCode({ workflowsPath: path, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } })
    }
    const first = await cachedBundle(cache, path, [], build)
    const second = await cachedBundle(cache, path, [], build)
    expect(builds).toBe(1)
    expect(second).toEqual({ code: first.code, sourceMap: first.sourceMap })
    expect(second.code).toContain('sendOutboxMail')
    expect(readdirSync(cache)).toEqual([`${bundleKey(path, [])}.json`])
  }, 120_000)

  test('any change to a workflow source, or other interceptor modules, is a different bundle', () => {
    const path = copyOfWorkflows()
    const before = bundleKey(path, [])
    appendFileSync(join(path, '..', 'contract.ts'), '\n// a change in a module the bundle imports\n')
    const afterEdit = bundleKey(path, [])
    expect(afterEdit).not.toBe(before)
    writeFileSync(join(path, '..', 'new-workflow.ts'), 'export {}\n')
    expect(bundleKey(path, [])).not.toBe(afterEdit)
    const interceptor = join(scratch(), 'interceptors.js')
    writeFileSync(interceptor, 'export const interceptors = () => ({})\n')
    expect(bundleKey(path, [interceptor])).not.toBe(bundleKey(path, []))
  })

  test('a torn file (a crash mid-write) is built again, not loaded', async () => {
    const cache = scratch()
    const path = copyOfWorkflows()
    writeFileSync(join(cache, `${bundleKey(path, [])}.json`), '{"code":"var a')
    let builds = 0
    const bundle = await cachedBundle(cache, path, [], async () => {
      builds++
      return { code: 'built', sourceMap: '{}' } as never
    })
    expect(builds).toBe(1)
    expect(bundle.code).toBe('built')
    expect(
      (
        await cachedBundle(cache, path, [], async () => {
          throw new Error('must not build')
        })
      ).code,
    ).toBe('built')
  })

  test('a bundle unused for a week is removed when another is written; one read meanwhile is kept', async () => {
    const cache = scratch()
    const path = copyOfWorkflows()
    const old = new Date(Date.now() - UNUSED_BUNDLE_MS - 60_000)
    const stale = join(cache, 'a-bundle-of-sources-long-gone.json')
    writeFileSync(stale, '{}')
    utimesSync(stale, old, old)
    const inUse = join(cache, `${bundleKey(path, [])}.json`)
    writeFileSync(inUse, JSON.stringify({ code: 'in use', sourceMap: '{}' }))
    utimesSync(inUse, old, old)
    expect(
      (
        await cachedBundle(cache, path, [], async () => {
          throw new Error('must not build')
        })
      ).code,
    ).toBe('in use')
    expect(statSync(inUse).mtimeMs).toBeGreaterThan(Date.now() - 60_000)
    appendFileSync(join(path, '..', 'contract.ts'), '\n// a change: a new bundle is written\n')
    await cachedBundle(cache, path, [], async () => ({ code: 'new', sourceMap: '{}' }) as never)
    expect(existsSync(stale)).toBe(false)
    expect(existsSync(inUse)).toBe(true)
    expect(readdirSync(cache).sort()).toEqual([`${bundleKey(path, [])}.json`, inUse.split('/').at(-1)!].sort())
  })

  test('a cache that cannot be written never fails the start: the bundle built is used', async () => {
    const notADirectory = join(scratch(), 'a-file')
    writeFileSync(notADirectory, '')
    const bundle = await cachedBundle(join(notADirectory, 'bundles'), copyOfWorkflows(), [], async () => ({ code: 'built', sourceMap: '{}' }) as never)
    expect(bundle.code).toBe('built')
  })
})
