// The bell and the inbox in Chromium: the unread count in the header, asked once on load and then every 30 seconds
// (the page's clock is driven, not waited for), the inbox page's read, unread, archive and "mark all read".
import { describe, expect, test } from 'bun:test'
import { notify } from '../../api/notifications/service'
import { signedUpUser } from '../support/fixtures'
import { auditPage, expectClean, guardedPage, HOSTILE, openPage, signInAs, useConsole } from './browser'

const env = useConsole()

const note = (userId: string, kind: 'account.totp_removed' | 'account.passkey_added', fields: Record<string, unknown> = {}) =>
  env.api.sql.begin((tx) => notify(tx, env.api.deps.keys, { userId, kind, fields: fields as never, dedupeKey: crypto.randomUUID() }))

describe('console: notifications', () => {
  test('the bell polls every 30 s, no faster; the inbox reads, unreads, archives and marks all read', async () => {
    const u = await signedUpUser(env.api.url)
    await note(u.userId, 'account.totp_removed')
    await note(u.userId, 'account.passkey_added', { passkeyId: crypto.randomUUID() })
    const g = await guardedPage(env.browser, env.origin)
    const counts: number[] = []
    g.page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/v1/users/me/notifications/count') counts.push(Date.now())
    })
    try {
      await g.page.clock.install()
      await signInAs(g, env.origin, u.email)
      const bell = g.page.locator('#bell')
      // The two above and the sign-in itself: the browser is a client this account never used.
      await g.page.getByRole('link', { name: 'Notifications: 3 unread' }).waitFor()
      // The page's clock stops here; two minutes of it later the bell has asked exactly four times more (one every 30
      // seconds, whatever the phase), and its answer shows the notification that arrived meanwhile.
      await g.page.clock.pauseAt(new Date(Date.now() + 1_000))
      const asked = counts.length
      expect(asked).toBeGreaterThanOrEqual(1)
      await note(u.userId, 'account.totp_removed')
      await g.page.clock.runFor(120_000)
      await g.page.getByRole('link', { name: 'Notifications: 4 unread' }).waitFor()
      expect(counts.length - asked).toBe(4)
      await g.page.clock.resume() // Preact runs its effects on the clock's timers too

      await bell.click()
      await g.page.getByRole('heading', { level: 1, name: 'Notifications' }).waitFor()
      await g.page.getByRole('button', { name: 'Mark read: A passkey was added to your account' }).click()
      await g.page.getByRole('link', { name: 'Notifications: 3 unread' }).waitFor()
      await g.page.getByText('A sign-in (password) from a new client: Chrome on Linux').waitFor()
      await g.page.getByRole('button', { name: 'Archive: A passkey was added to your account' }).click()
      await g.page.getByRole('button', { name: 'Archive: A passkey was added to your account' }).waitFor({ state: 'detached' })
      await auditPage(g, 'notifications')

      await g.page.getByRole('button', { name: 'Mark all read' }).click()
      await g.page.getByRole('link', { name: 'Notifications: 0 unread' }).waitFor()
      expect((await u.client.get('/users/me/notifications/count')).json.data.unread).toBe(0)
      await g.page.getByLabel('Show').selectOption('archived')
      await g.page.getByRole('button', { name: 'Mark unread: A passkey was added to your account' }).click()
      await g.page.getByRole('link', { name: 'Notifications: 1 unread' }).waitFor()
      expect(await g.page.content()).not.toContain(HOSTILE)
      await openPage(g, 'My account')
      expectClean(g)
    } finally {
      await g.close()
    }
  }, 60_000)
})
