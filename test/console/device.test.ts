// The device sign-in page in Chromium: a signed-out person opens the verification link the device printed, signs in
// through the form, comes back to the code, sees the client, its scopes and its address, picks a tenant and approves;
// the device's next poll receives a PAT with exactly those scopes. And a denial.
import { describe, expect, test } from 'bun:test'
import { Client } from '../support/client'
import { tenantOwner, uniqueSlug } from '../support/fixtures'
import { auditPage, expectClean, guardedPage, HOSTILE, SIGNED_OUT } from './browser'
import { PASSWORD } from '../support/fixtures'
import { useConsole } from './browser'

const env = useConsole()

async function startDevice(scopes: string[], clientName: string) {
  const res = await new Client(env.api.url).post('/device/authorizations', { clientName, scopes })
  expect(res.status).toBe(201)
  return res.json.data as { deviceCode: string; userCode: string; verificationUriComplete: string }
}

describe('console: device sign-in', () => {
  test('signed out: the link leads through sign-in back to the code; approving for the chosen tenant gives the device its token', async () => {
    const owner = await tenantOwner(env.api.url)
    // A second tenant, current in the session: the person picks the first one on the page.
    const second = await owner.client.post('/tenants', { name: 'Second lab', slug: uniqueSlug('lab') })
    expect(second.status).toBe(201)
    const started = await startDevice(['tenant:read', 'model:read'], HOSTILE)
    expect(new URL(started.verificationUriComplete).origin).toBe(env.origin)

    const g = await guardedPage(env.browser, env.origin)
    try {
      const signedOut = g.expect4xx(...SIGNED_OUT)
      await g.page.goto(started.verificationUriComplete)
      await g.page.getByRole('heading', { name: 'Sign in to approve a device' }).waitFor()
      await g.page.getByLabel('Email').fill(owner.email)
      await g.page.getByLabel('Password').fill(PASSWORD)
      await g.page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await g.page.getByRole('heading', { name: 'Sign in a device' }).waitFor({ timeout: 10_000 })
      signedOut()
      expect(await g.page.getByLabel('Code').inputValue()).toBe(started.userCode)
      await g.page.getByRole('button', { name: 'Continue' }).click()
      await g.page.getByRole('heading', { name: 'A device asks to act as you' }).waitFor()
      expect(await g.page.locator('#device-client').textContent()).toBe(HOSTILE)
      expect(await g.page.locator('img[src="x"]').count()).toBe(0)
      const scopes = await g.page.getByRole('list', { name: 'Scopes asked for' }).getByRole('listitem').allTextContents()
      expect(scopes).toEqual(['tenant:read', 'model:read'])
      expect((await g.page.locator('#device-address').textContent())!.length).toBeGreaterThan(0)
      await auditPage(g, 'device-approve')

      await g.page.getByLabel('Tenant').selectOption(owner.tenantId)
      await g.page.getByRole('button', { name: 'Approve' }).click()
      await g.page.getByRole('heading', { name: 'Device approved' }).waitFor()
      await auditPage(g, 'device-approved')
      expectClean(g)
    } finally {
      await g.close()
    }

    const polled = await new Client(env.api.url).post('/device/tokens', { deviceCode: started.deviceCode })
    expect(polled.status).toBe(200)
    expect(polled.json.data.tenantId).toBe(owner.tenantId)
    const self = await new Client(env.api.url).withBearer(polled.json.data.token).get('/tokens/self')
    expect(self.status).toBe(200)
    expect([...self.json.data.grantCeiling].sort()).toEqual(['model:read', 'tenant:read'])
    expect(self.json.data.tenantId).toBe(owner.tenantId)
  }, 90_000)

  test('signed in, a code typed by hand in lower case; deny: the device is told access_denied', async () => {
    const owner = await tenantOwner(env.api.url)
    const started = await startDevice(['tenant:read'], 'rcp on robot-7')
    const g = await guardedPage(env.browser, env.origin)
    try {
      const signedOut = g.expect4xx(...SIGNED_OUT)
      await g.page.goto(`${env.origin}/console`)
      await g.page.getByLabel('Email').fill(owner.email)
      await g.page.getByLabel('Password').fill(PASSWORD)
      await g.page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await g.page.locator('#sign-out').waitFor({ timeout: 10_000 })
      signedOut()
      await g.page.goto(`${env.origin}/console/device`)
      await g.page.getByRole('heading', { name: 'Sign in a device' }).waitFor()
      await g.page.getByLabel('Code').fill(started.userCode.toLowerCase().replace('-', ' '))
      await g.page.getByRole('button', { name: 'Continue' }).click()
      await g.page.getByRole('heading', { name: 'A device asks to act as you' }).waitFor()
      await g.page.getByRole('button', { name: 'Deny' }).click()
      await g.page.getByRole('heading', { name: 'Device denied' }).waitFor()
      expectClean(g)
    } finally {
      await g.close()
    }
    const polled = await new Client(env.api.url).post('/device/tokens', { deviceCode: started.deviceCode })
    expect(polled.json).toMatchObject({ code: 'DEVICE_ACCESS_DENIED', error: 'access_denied' })
  }, 90_000)
})
