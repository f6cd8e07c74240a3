// The webhooks page in Chromium against the real platform and a delivery worker: an endpoint added (its secret shown
// once), a test event received and verified by a local HTTPS receiver, the message and its attempt in the log, the
// secret rotated with the overlap shown, the message redelivered, a recovery, the rate limit, the endpoint disabled
// and deleted; the catalogue with schemas and example payloads.
// A hostile endpoint description renders as text.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { localhostOrigin } from '../support/api'
import { releaseChromium, sharedChromium } from '../support/chromium'
import { tenantOwner } from '../support/fixtures'
import { eventually } from '../support/temporal'
import { Receiver, useDeliveryEnv } from '../webhooks/delivery-helpers'
import { auditPage, HOSTILE, onConsolePage } from './browser'

const { port, origin } = localhostOrigin()
const env = useDeliveryEnv({ PORT: String(port), PUBLIC_URL: origin, WORKER_TASK_QUEUES: '' })
let browser: Browser
beforeAll(async () => {
  browser = await sharedChromium()
})
afterAll(async () => {
  await releaseChromium(browser)
})

describe('console: webhooks', () => {
  test('add an endpoint, send a test event to a local receiver, read its attempt, rotate, redeliver, recover, limit, disable, delete', async () => {
    const owner = await tenantOwner(env.api.url)
    const receiver = await new Receiver(env.certs).start()
    try {
      await onConsolePage(
        { browser, origin },
        owner.email,
        'Webhooks',
        async (g) => {
          const { page } = g
          await page.getByText('No endpoint yet').waitFor()
          await page.locator('.catalogue li').first().waitFor()
          await auditPage(g, 'webhooks-empty')

          await page.getByLabel('URL (HTTPS)').fill(receiver.url())
          await page.getByLabel('Description').fill(HOSTILE)
          await page.getByLabel('webhook_endpoint.test').check()
          await page.getByLabel('training_job.completed').check()
          await page.getByRole('button', { name: 'Add endpoint' }).click()
          const secret = (await page.getByRole('region', { name: "The endpoint's signing secret" }).locator('code').textContent())!
          expect(secret).toStartWith('whsec_')
          receiver.secrets = [secret]
          await page.getByRole('button', { name: 'Done' }).click()
          await page.getByRole('cell', { name: HOSTILE, exact: true }).waitFor()
          expect(await page.locator('img[src="x"]').count()).toBe(0)

          await page.getByRole('button', { name: `Open ${receiver.url()}` }).click()
          await page.getByRole('button', { name: 'Send test event' }).click()
          await page.getByRole('status').filter({ hasText: 'Test event sent' }).waitFor()
          // Until it arrives: a loop of 10 s failed this on a loaded machine (2026-11-28, load average 25).
          await eventually('the test event at the receiver', async () => receiver.of('webhook_endpoint.test').length > 0 || undefined, 30_000)
          expect(receiver.of('webhook_endpoint.test').map((d) => d.verifiedBy)).toEqual([[0]])

          const row = page.locator('.panel tbody tr', { hasText: 'webhook_endpoint.test' })
          for (let i = 0; i < 50 && !(await row.textContent().catch(() => ''))?.includes('succeeded'); i++) {
            await page.getByRole('button', { name: 'Refresh' }).click()
            await Bun.sleep(200)
          }
          expect(await row.textContent()).toContain('succeeded')
          await row.getByRole('button', { name: /^Attempts of / }).click()
          await page.getByRole('heading', { name: /^Attempts of msg_/ }).waitFor()
          expect(await page.locator('.attempts tbody tr').first().textContent()).toContain('204 ok')

          await page.getByRole('button', { name: 'Rotate secret' }).click()
          await page.getByRole('status').filter({ hasText: 'the previous one still signs until' }).waitFor()
          const rotated = (await page.getByRole('region', { name: 'The new signing secret' }).locator('code').textContent())!
          expect(rotated).toStartWith('whsec_')
          expect(rotated).not.toBe(secret)

          await page.locator('details', { hasText: 'training_job.completed' }).locator('summary').click()
          const example = page.locator('details[open] pre').nth(1)
          expect(await example.textContent()).toContain('"trainingJobId"')
          await auditPage(g, 'webhooks')

          await page.getByRole('button', { name: 'Redeliver' }).click()
          await page.getByRole('status').filter({ hasText: 'Message sent again.' }).waitFor()
          await eventually('the redelivery at the receiver', async () => receiver.of('webhook_endpoint.test').length >= 2 || undefined, 30_000)
          expect(receiver.of('webhook_endpoint.test').length).toBe(2)

          await page.getByLabel(/^Send every failed message again/).fill(new Date(Date.now() - 3_600_000).toISOString().slice(0, 16))
          await page.getByRole('button', { name: 'Recover' }).click()
          await page.getByRole('status').filter({ hasText: '0 failed messages sent again.' }).waitFor()

          await page
            .getByLabel(/^Deliveries per second at most/)
            .nth(0)
            .fill('5')
          await page.getByRole('button', { name: 'Save rate limit' }).click()
          await page.getByRole('status').filter({ hasText: 'Rate limit saved.' }).waitFor()
          // The panel reloads the endpoint after each change; the next change goes with the ETag it read, so it waits
          // for the reloaded endpoint (clicked earlier, it sends the previous ETag and meets a 412, as a person would).
          await page.getByText('Rate limit: 5 per second.').waitFor()

          await page.getByRole('button', { name: 'Disable' }).click()
          await page.getByRole('status').filter({ hasText: 'Endpoint disabled.' }).waitFor()
          await page.getByText(/Disabled \(manual\) since/).waitFor()
          const [endpoint] = (await owner.client.get('/webhook-endpoints')).json.data
          expect(endpoint).toMatchObject({ enabled: false, disabledReason: 'manual', description: HOSTILE, rateLimitPerSecond: 5 })

          await page.getByRole('button', { name: 'Delete endpoint' }).click()
          await page.getByRole('button', { name: 'Confirm deletion' }).click()
          await page.getByText('No endpoint yet').waitFor()
          expect((await owner.client.get('/webhook-endpoints')).json.data).toEqual([])
        },
        ['clipboard-read', 'clipboard-write'],
      )
    } finally {
      await receiver.stop()
    }
  }, 90_000)
})
