// The models page in Chromium: an embodiment profile created with its features typed as lines (a hostile name stays
// text), edited with its ETag (a concurrent change shows the 412 and reloads), and the model versions' empty state.
import { describe, expect, test } from 'bun:test'
import { tenantOwner } from '../support/fixtures'
import { auditPage, HOSTILE, onConsolePage, openPage, useConsole } from './browser'

const env = useConsole()

describe('console: models', () => {
  test('create a profile, edit its features with the ETag, see a concurrent change', async () => {
    const owner = await tenantOwner(env.api.url)
    await onConsolePage(env, owner.email, 'Models', async (g) => {
      const { page } = g
      await page.getByText('No embodiment profile yet.').waitFor()
      await page.getByText('No model version.').waitFor()
      await auditPage(g, 'models-empty')

      await page.locator('#new-name').fill(HOSTILE)
      await page.locator('#new-robot').fill('so100')
      await page.locator('#new-rate').fill('30')
      await page.locator('#new-observations').fill('wrist uint8 224,224,3 image\njoints float32 6 state')
      await page.locator('#new-actions').fill('target float32 6')
      await page.getByRole('button', { name: 'Create profile' }).click()
      await page.getByRole('cell', { name: HOSTILE, exact: true }).waitFor()
      expect(await page.locator('img[src="x"]').count()).toBe(0)
      const [created] = (await owner.client.get('/embodiment-profiles')).json.data
      expect(created).toMatchObject({
        name: HOSTILE,
        robotType: 'so100',
        controlRateHz: 30,
        observationFeatures: [
          { name: 'wrist', dtype: 'uint8', shape: [224, 224, 3], kind: 'image' },
          { name: 'joints', dtype: 'float32', shape: [6], kind: 'state' },
        ],
        actionFeatures: [{ name: 'target', dtype: 'float32', shape: [6] }],
      })

      await page.getByRole('button', { name: `Edit ${HOSTILE}` }).click()
      await page.locator('#edit-rate').waitFor()
      const asRead = (await owner.client.get(`/embodiment-profiles/${created.id}`)).headers.get('etag')!
      expect((await owner.client.patch(`/embodiment-profiles/${created.id}`, { robotType: 'aloha' })).status).toBe(200)
      await page.locator('#edit-rate').fill('50')
      const staleSave = g.expect4xx({ status: 412, method: 'PATCH', path: `/v1/embodiment-profiles/${created.id}` })
      await page.getByRole('button', { name: 'Save profile' }).click()
      const stale = page.getByRole('alert').filter({ hasText: 'changed meanwhile' })
      await stale.waitFor()
      staleSave()
      const refused = await owner.client.patch(`/embodiment-profiles/${created.id}`, { controlRateHz: 50 }, { 'if-match': asRead })
      expect(refused.status).toBe(412)
      expect(await stale.textContent()).toContain(refused.json.message)
      await page.waitForFunction(() => (document.getElementById('edit-robot') as HTMLInputElement | null)?.value === 'aloha')
      await page.locator('#edit-rate').fill('50')
      await page.locator('#edit-actions').fill('target float32 7')
      await page.getByRole('button', { name: 'Save profile' }).click()
      await page.locator('#edit-rate').waitFor({ state: 'detached' })
      const saved = (await owner.client.get(`/embodiment-profiles/${created.id}`)).json.data
      expect(saved).toMatchObject({ robotType: 'aloha', controlRateHz: 50, actionFeatures: [{ name: 'target', dtype: 'float32', shape: [7] }] })
      await auditPage(g, 'models')
    })
  }, 60_000)

  test("the project filter lists one project's model versions, and the packages page has one too", async () => {
    const owner = await tenantOwner(env.api.url)
    const project = async (name: string) => (await owner.client.post('/projects', { name, slug: `${name}-${crypto.randomUUID()}` })).json.data.id as string
    const [arm, humanoid] = [await project('arm'), await project('humanoid')]
    const source = { kind: 'imported_checkpoint', path: 'models/x.onnx' }
    for (const [name, projectId] of [
      ['arm policy', arm],
      ['humanoid policy', humanoid],
      ['shared policy', undefined],
    ] as const) {
      expect((await owner.client.post('/model-versions', { name, format: 'onnx', source, projectId })).status).toBe(201)
    }
    await onConsolePage(env, owner.email, 'Models', async (g) => {
      const { page } = g
      const rows = page.locator('#versions tbody tr')
      await page.getByRole('cell', { name: 'shared policy', exact: true }).waitFor()
      expect(await rows.count()).toBe(3)
      await page.locator('#version-project').selectOption({ label: 'arm' })
      await page.getByRole('cell', { name: 'humanoid policy', exact: true }).waitFor({ state: 'detached' })
      expect(await rows.allInnerTexts()).toEqual([expect.stringContaining('arm policy')])
      await auditPage(g, 'models-project-filter')
      await page.locator('#version-project').selectOption('')
      await page.getByRole('cell', { name: 'humanoid policy', exact: true }).waitFor()

      await openPage(g, 'Packages')
      await page.locator('#package-project').selectOption({ label: 'humanoid' })
      await page.getByText('No package yet.').waitFor()
      await auditPage(g, 'packages-project-filter')
    })
  }, 60_000)
})
