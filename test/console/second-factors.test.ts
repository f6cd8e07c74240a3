// Second factors from the console in Chromium: a passkey added on My account with DevTools' virtual authenticator,
// then the sign-in with it alone and as the second-factor step of a password sign-in; an authenticator app enrolled
// from its QR code and secret (shown while enrolling only) with a code from otplib, its recovery codes shown once,
// and one of them answering the sign-in challenge.
import { describe, expect, test } from 'bun:test'
import { generate } from 'otplib'
import { PASSWORD, tenantOwner } from '../support/fixtures'
import { awayFromStepEdge } from '../mfa/helpers'
import { addPasskeyAuthenticator, auditPage, guardedPage, HOSTILE, openPage, signInAs, SIGNED_OUT, useConsole, type GuardedPage } from './browser'

const env = useConsole((origin) => ({ WEBAUTHN_RP_ID: 'localhost', WEBAUTHN_ORIGINS: origin }))

/** Signs out; the signed-out console's probes answer 401 until the returned function says the page signed in again. */
async function signOut(g: GuardedPage): Promise<() => void> {
  // The page's own loads finish first: one still on its way when the session ends would be answered 401.
  await g.page.waitForFunction(() => document.querySelectorAll('.loading').length === 0)
  const signedIn = g.expect4xx(...SIGNED_OUT)
  await g.page.locator('#sign-out').click()
  await g.page.getByRole('heading', { level: 2, name: 'Sign in' }).waitFor()
  return signedIn
}

async function passwordSignIn(g: GuardedPage, email: string) {
  await g.page.getByLabel('Email').fill(email)
  await g.page.getByLabel('Password').fill(PASSWORD)
  await g.page.getByRole('button', { name: 'Sign in', exact: true }).click()
}

async function withPage(fn: (g: GuardedPage) => Promise<void>) {
  const g = await guardedPage(env.browser, env.origin)
  try {
    await fn(g)
  } finally {
    await g.close()
  }
}

describe('console: second factors', () => {
  test('a passkey added on My account signs in alone, then answers the second-factor step', async () => {
    const owner = await tenantOwner(env.api.url)
    await withPage(async (g) => {
      const { page } = g
      await addPasskeyAuthenticator(g)
      await signInAs(g, env.origin, owner.email)
      await openPage(g, 'My account')
      await page.getByText('No passkey yet.').waitFor()
      await auditPage(g, 'account-factors-empty')

      await page.getByLabel('Name of the new passkey').fill(HOSTILE)
      await page.getByRole('button', { name: 'Add a passkey' }).click()
      await page.locator('#passkeys').getByRole('cell', { name: HOSTILE, exact: true }).waitFor()
      expect(await page.locator('img[src="x"]').count()).toBe(0)
      const [credential] = (await owner.client.get('/users/me/webauthn/credentials')).json.data
      expect(credential).toMatchObject({ name: HOSTILE, lastUsedAt: null })
      await auditPage(g, 'account-passkeys')

      // The passkey alone: no email, no password.
      let signedIn = await signOut(g)
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click()
      await page.locator('#sign-out').waitFor()
      signedIn()
      expect(await page.locator('header .who').textContent()).toContain(owner.email)

      // A password sign-in is now challenged, and the passkey answers.
      signedIn = await signOut(g)
      await passwordSignIn(g, owner.email)
      await page.getByRole('heading', { name: 'Second factor' }).waitFor()
      await auditPage(g, 'second-factor-passkey')
      await page.getByRole('button', { name: 'Use a passkey' }).click()
      await page.locator('#sign-out').waitFor()
      signedIn()
      const used = (await owner.client.get('/users/me/webauthn/credentials')).json.data[0]
      expect(used.lastUsedAt).not.toBeNull()
    })
  }, 90_000)

  test('an authenticator app from its QR code and a code from otplib; recovery codes shown once, one answers the challenge', async () => {
    const owner = await tenantOwner(env.api.url)
    await withPage(async (g) => {
      const { page } = g
      await signInAs(g, env.origin, owner.email)
      await openPage(g, 'My account')
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click()
      const qr = page.locator('#totp-qr')
      await qr.waitFor()
      expect(await qr.getAttribute('src')).toStartWith('data:image/png;base64,')
      // Drawn, not refused: the console's CSP admits data: images (a refusal would also fail the clean-page check).
      await page.waitForFunction(() => (document.getElementById('totp-qr') as HTMLImageElement).naturalWidth > 0)
      const secret = (await page.locator('#totp-secret').textContent())!
      expect(secret).toMatch(/^[A-Z2-7]{16,}$/)
      await auditPage(g, 'account-totp-enrol')

      // The previous step's code, so the current step is still unused when the sign-in below needs a code.
      await awayFromStepEdge()
      await page.locator('#totp-code').fill(await generate({ secret, period: 30, digits: 6, epoch: Math.floor(Date.now() / 1000) - 30 }))
      await page.getByRole('button', { name: 'Confirm' }).click()
      const shown = page.getByRole('region', { name: 'Recovery codes' })
      await shown.waitFor()
      const codes = await shown.locator('#recovery-codes li').allTextContents()
      expect(codes.length).toBe(10)
      await page.locator('#totp-state', { hasText: '10 recovery codes left' }).waitFor()
      expect(await page.locator('#totp-secret').count()).toBe(0) // the secret is gone once enrolled
      await auditPage(g, 'account-totp-recovery-codes')
      await shown.getByRole('button', { name: 'Done' }).click()
      await page.reload()
      await page.locator('#totp-state', { hasText: '10 recovery codes left' }).waitFor()
      expect(await page.content()).not.toContain(codes[0]!) // never shown again

      const signedIn = await signOut(g)
      await passwordSignIn(g, owner.email)
      await page.getByRole('heading', { name: 'Second factor' }).waitFor()
      expect(await page.getByRole('button', { name: 'Use a passkey' }).count()).toBe(0)
      await page.getByLabel('Code from your authenticator app, or a recovery code').fill(codes[3]!)
      await page.getByRole('button', { name: 'Confirm' }).click()
      await page.locator('#sign-out').waitFor()
      signedIn()
      await openPage(g, 'My account')
      await page.locator('#totp-state', { hasText: '9 recovery codes left' }).waitFor()
    })
  }, 90_000)
})
