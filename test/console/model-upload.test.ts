// The models page in Chromium: a model file uploaded from the browser with its progress bar to 100%, through our own
// origin (the page's CSP and the guard allow nothing else), validated by the worker to ready with the file's digest;
// then the versions' status filter.
import { describe, expect, test } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { provisionedTenant } from '../storage/helpers'
import { auditPage, HOSTILE, onConsolePage, useConsole } from './browser'

const env = useConsole()

// Past the API's JSON body limit (1 MiB), so only the streaming upload route can take it.
const bytes = randomBytes(12 * 1024 * 1024)
const file = join(mkdtempSync(join(tmpdir(), 'rcp-console-upload-')), 'policy.onnx')
writeFileSync(file, bytes)

describe('console: model upload', () => {
  test('upload a file with its progress to 100%, validated ready; filter the versions by status', async () => {
    const owner = await provisionedTenant(env.api.url)
    await onConsolePage(env, owner.email, 'Models', async (g) => {
      const { page } = g
      await page.getByText('No model version.').waitFor()
      // Every percentage the progress bar shows, in order, recorded by the page itself as it changes.
      await page.evaluate(() => {
        const seen: number[] = []
        ;(window as unknown as { seen: number[] }).seen = seen
        new MutationObserver(() => {
          const p = document.querySelector('progress')
          const v = p ? Number(p.dataset.percent) : NaN
          if (!Number.isNaN(v) && seen.at(-1) !== v) seen.push(v)
        }).observe(document.body, { subtree: true, childList: true, attributes: true })
      })

      await page.locator('#version-name').fill(HOSTILE)
      await page.locator('#version-format').selectOption('onnx')
      await page.locator('#version-file').setInputFiles(file)
      expect(await page.locator('#version-key').inputValue()).toBe('models/policy.onnx')
      await page.getByRole('button', { name: 'Create, upload and validate' }).click()
      await page.locator('#transfer-result', { hasText: 'is ready' }).waitFor({ timeout: 60_000 })

      const seen = await page.evaluate(() => (window as unknown as { seen: number[] }).seen)
      expect(seen.at(-1)).toBe(100)
      expect(seen).toEqual([...seen].sort((a, b) => a - b)) // it only moves forward
      expect(await page.locator('.progress .percent').textContent()).toBe('100%')
      expect(await page.locator('progress').evaluate((p: HTMLProgressElement) => [p.value, p.max])).toEqual([bytes.length, bytes.length])
      expect(await page.locator('img[src="x"]').count()).toBe(0)

      const [version] = (await owner.client.get('/model-versions')).json.data
      expect(version).toMatchObject({
        name: HOSTILE,
        status: 'ready',
        totalBytes: bytes.length,
        objects: [{ key: 'models/policy.onnx', sizeBytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') }],
      })
      await page.locator('#versions tbody tr td:nth-child(3)', { hasText: 'ready' }).waitFor()
      await auditPage(g, 'models-upload')

      // The status filter: a draft beside the ready version, each status showing its own.
      const draft = (
        await owner.client.post('/model-versions', {
          name: 'draft one',
          format: 'onnx',
          source: { kind: 'imported_checkpoint', path: 'models/draft.onnx' },
        })
      ).json.data
      const names = () => page.locator('#versions tbody tr td:first-child').allTextContents()
      await page.locator('#version-status').selectOption('draft')
      await page.waitForFunction(
        () => document.querySelectorAll('#versions tbody tr').length === 1 && document.querySelector('#versions tbody td')?.textContent === 'draft one',
      )
      expect(await names()).toEqual([draft.name])
      await page.getByRole('button', { name: 'Upload and validate draft one' }).waitFor()
      await page.locator('#version-status').selectOption('ready')
      await page.waitForFunction(() => document.querySelector('#versions tbody td')?.textContent !== 'draft one')
      expect(await names()).toEqual([HOSTILE])
      await page.locator('#version-status').selectOption('failed')
      await page.getByText('No model version failed.').waitFor()
      await page.locator('#version-status').selectOption('')
      await page.waitForFunction(() => document.querySelectorAll('#versions tbody tr').length === 2)
    })
  }, 120_000)
})
