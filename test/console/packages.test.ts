// The packages page in Chromium: a package requested with the keyboard alone for a ready model version, built by the
// worker while the page shows its progress, its verification commands, and the runs a robot reported charted.
import { describe, expect, test } from 'bun:test'
import { makeProfile, makeVersion, modelTenant } from '../edge-packages/helpers'
import { auditPage, HOSTILE, onConsolePage, useConsole } from './browser'

const env = useConsole()
const FILES = { 'policy.onnx': Buffer.from('not really onnx, but bytes all the same') }
const run = (p50: number, p99: number, finishedAt: string) => ({
  stepsDone: 5,
  latencyMs: { p50, p99 },
  contractViolations: 0,
  exitReason: 'completed',
  violations: [],
  startedAt: '2026-01-01T00:00:00Z',
  finishedAt,
})

describe('console: packages', () => {
  test('request with the keyboard alone, watch it build, verify, see its runs', async () => {
    const t = await modelTenant(env.api.url)
    await makeProfile(env.api.sql, t.tenantId, HOSTILE)
    await makeVersion(env.api.sql, t.tenantId, t.general, FILES)
    await onConsolePage(env, t.email, 'Packages', async (g) => {
      const { page } = g
      await page.getByText('No package yet.').waitFor()
      await page.locator('#pkg-version').waitFor()
      await auditPage(g, 'packages-empty')
      expect(await page.locator('#pkg-profile option').textContent()).toBe(HOSTILE)

      const focused = () => page.evaluate(() => document.activeElement?.id ?? '')
      for (let i = 0; i < 40 && (await focused()) !== 'pkg-version'; i++) await page.keyboard.press('Tab')
      expect(await focused()).toBe('pkg-version')
      for (const [id, keys] of [
        ['pkg-profile', ''],
        ['pkg-mode', ''],
        ['pkg-host', 'policy.internal'],
        ['pkg-port', '8000'],
        ['pkg-steps', '5'],
      ] as const) {
        await page.keyboard.press('Tab')
        expect(await focused()).toBe(id)
        if (id === 'pkg-steps') await page.keyboard.press('Control+A')
        if (keys) await page.keyboard.type(keys)
      }
      for (let i = 0; i < 10 && !(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name === 'fake')); i++)
        await page.keyboard.press('Tab')
      await page.keyboard.press('Space')
      await page.keyboard.press('Tab')
      await page.keyboard.press('Enter')

      const state = page.locator('#package-state')
      await state.filter({ hasText: /^ready/ }).waitFor({ timeout: 60_000 })
      const [pkg] = (await t.models.get('/edge-inference-packages')).json.data
      expect(pkg).toMatchObject({
        status: 'ready',
        mode: 'remote_ws',
        remotePolicyHost: 'policy.internal',
        remotePolicyPort: 8000,
        steps: 5,
        useFakeTransport: true,
      })
      expect(await page.locator('#verify-commands').textContent()).toContain(`${env.origin}/v1/edge-inference-packages/${pkg.id}`)
      expect(await page.getByText(pkg.artifact.sha256).count()).toBe(1)

      for (const [p50, p99, at] of [
        [12, 30, '2026-01-01T00:01:00Z'],
        [14, 41, '2026-01-01T00:02:00Z'],
      ] as const) {
        expect((await t.models.post(`/edge-inference-packages/${pkg.id}/runs`, run(p50, p99, at))).status).toBe(201)
      }
      await page.getByRole('button', { name: 'Refresh' }).click()
      await page.locator('.panel tbody tr').nth(1).waitFor()
      expect(await page.locator('svg.chart polyline').count()).toBe(2)
      await auditPage(g, 'packages')
    })
  }, 120_000)
})
