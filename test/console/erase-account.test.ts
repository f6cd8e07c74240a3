// My data on the account page, in Chromium: the personal export downloaded as a JSON file; "delete my account" with
// its refusals explained (the sole owner told which tenants, a held member told a hold keeps the data); and the
// erasure itself, after signing in again when the session is old (with the second factor when the account has one),
// which leaves the browser signed out.
import { describe, expect, test } from 'bun:test'
import { readFile } from 'node:fs/promises'
import { Client } from '../support/client'
import { PASSWORD, tenantOwner } from '../support/fixtures'
import { memberOf } from '../tenancy/members'
import { enrolTotp } from '../mfa/helpers'
import { auditPage, expectClean, guardedPage, onConsolePage, openPage, SIGNED_OUT, useConsole } from './browser'

const env = useConsole()
const ME = '/v1/users/me'

describe('console: my data and deleting my account', () => {
  test('the export downloads; the sole owner and a held member are refused, each told why', async () => {
    const owner = await tenantOwner(env.api.url)
    const held = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'researcher')
    const hold = await owner.client.post('/tenants/current/legal-holds', { matter: 'M', reason: 'r', scope: { kind: 'member', userId: held.userId } })
    expect(hold.status).toBe(201)

    await onConsolePage(
      env,
      owner.email,
      'My account',
      async (g) => {
        const { page } = g
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download my data' }).click()])
        expect(download.suggestedFilename()).toMatch(/^my-data-\d{4}-\d{2}-\d{2}\.json$/)
        const mine = JSON.parse(await readFile((await download.path())!, 'utf8'))
        expect([mine.profile.email, mine.memberships.map((m: { tenantId: string }) => m.tenantId)]).toEqual([owner.email, [owner.tenantId]])

        await page.getByRole('button', { name: 'Delete my account' }).click()
        await page.getByRole('button', { name: 'Confirm: delete my account' }).click()
        const refusal = page.getByRole('region', { name: 'Delete my account' }).getByRole('alert')
        await refusal.waitFor()
        const text = (await refusal.textContent())!
        expect(text).toContain('LAST_OWNER_PROTECTION')
        expect(text).toContain('Test tenant')
        expect(text).toContain(`tenants.${owner.tenantId}`)
        expect(await page.locator('#erase-next-step').textContent()).toContain('Make another member an owner')
        await auditPage(g, 'account-erase-last-owner')
        expect((await owner.client.get('/users/me')).status).toBe(200)
      },
      [],
      [{ status: 409, method: 'DELETE', path: ME }],
    )

    await onConsolePage(
      env,
      held.email,
      'My account',
      async (g) => {
        const { page } = g
        await page.getByRole('button', { name: 'Delete my account' }).click()
        await page.getByRole('button', { name: 'Confirm: delete my account' }).click()
        const refusal = page.getByRole('region', { name: 'Delete my account' }).getByRole('alert')
        await refusal.waitFor()
        expect(await refusal.textContent()).toContain('LEGAL_HOLD_ACTIVE')
        expect(await page.locator('#erase-next-step').textContent()).toContain('kept while the hold lasts')
        expect((await held.client.get('/users/me')).status).toBe(200)
      },
      [],
      [{ status: 409, method: 'DELETE', path: ME }],
    )
  }, 90_000)

  test('erasure after signing in again: every session ends and the browser is signed out', async () => {
    const owner = await tenantOwner(env.api.url)
    const member = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'researcher')
    await onConsolePage(
      env,
      member.email,
      'My account',
      async (g) => {
        const { page } = g
        await env.api.sql`update sessions set authenticated_at = now() - interval '6 minutes' where user_id = ${member.userId}`
        await page.getByRole('button', { name: 'Delete my account' }).click()
        await page.getByRole('button', { name: 'Confirm: delete my account' }).click()
        const prompt = page.getByRole('region', { name: 'Confirm it is you' })
        await prompt.waitFor()
        expect((await member.client.get('/users/me')).status).toBe(200) // nothing erased yet
        await prompt.getByLabel('Your password').fill(PASSWORD)
        g.expect4xx(...SIGNED_OUT)
        await prompt.getByRole('button', { name: 'Sign in again and continue' }).click()
        await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor()

        const [user] = await env.api.sql<{ status: string; email: string }[]>`select status, email from users where id = ${member.userId}`
        expect(user!.status).toBe('erased')
        expect(user!.email).not.toBe(member.email)
        expect((await member.client.get('/users/me')).status).toBe(401)
        expect((await new Client(env.api.url).post('/sessions', { email: member.email, password: PASSWORD })).status).toBe(401)
        expect((await owner.client.get(`/tenants/current/memberships/${member.membershipId}`)).json.data.status).toBe('removed')
      },
      [],
      [{ status: 403, method: 'DELETE', path: ME }],
    )
  }, 60_000)

  test('signing in again asks for the second factor of an account that has one', async () => {
    const owner = await tenantOwner(env.api.url)
    const member = await memberOf(env.api.url, env.api.sql, owner.tenantId, 'researcher')
    const { recoveryCodes } = await enrolTotp(member.client)
    const g = await guardedPage(env.browser, env.origin)
    const { page } = g
    try {
      const signedOut = g.expect4xx(...SIGNED_OUT)
      await page.goto(`${env.origin}/console#/account`)
      await page.getByLabel('Email').fill(member.email)
      await page.getByLabel('Password').fill(PASSWORD)
      await page.getByRole('button', { name: 'Sign in', exact: true }).click()
      await page.locator('#mfa-code').fill(recoveryCodes[0]!)
      await page.getByRole('button', { name: 'Confirm' }).click()
      await page.locator('#sign-out').waitFor()
      signedOut()
      await openPage(g, 'My account')

      await env.api.sql`update sessions set authenticated_at = now() - interval '6 minutes' where user_id = ${member.userId}`
      const fresh = g.expect4xx({ status: 403, method: 'DELETE', path: ME })
      await page.getByRole('button', { name: 'Delete my account' }).click()
      await page.getByRole('button', { name: 'Confirm: delete my account' }).click()
      const prompt = page.getByRole('region', { name: 'Confirm it is you' })
      await prompt.getByLabel('Your password').fill(PASSWORD)
      await prompt.getByRole('button', { name: 'Sign in again and continue' }).click()
      await prompt.getByLabel(/^Code from your authenticator app/).fill(recoveryCodes[1]!)
      g.expect4xx(...SIGNED_OUT)
      await prompt.getByRole('button', { name: 'Confirm' }).click()
      await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor()
      fresh()
      const [user] = await env.api.sql<{ status: string }[]>`select status from users where id = ${member.userId}`
      expect(user!.status).toBe('erased')
      expectClean(g)
    } finally {
      await g.close()
    }
  }, 60_000)
})
