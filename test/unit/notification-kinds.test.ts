import { describe, expect, test } from 'bun:test'
import { clientFamily, clientNetwork } from '../../api/notifications/client-key'
import { lineOf, NOTIFICATION_KIND_NAMES, notificationKinds } from '../../api/notifications/kinds'

// A field whose name says it holds something that grants access, or proves identity, has no place in a notification:
// the inbox is shown in the console and mailed in the clear.
const SECRET_LOOKING = /secret|token|password|passcode|code|otp|recovery|link|url|hash|signature|cookie|csrf|credential(?!Id)|private|seed|session/i

describe('notification kinds', () => {
  test('no kind declares a field that looks like a secret, a code, a token or a link', () => {
    const offending = NOTIFICATION_KIND_NAMES.flatMap((kind) =>
      Object.keys(notificationKinds[kind].fields.shape).flatMap((field) => (SECRET_LOOKING.test(field) ? [`${kind}.${field}`] : [])),
    )
    expect(offending).toEqual([])
  })

  test('the deny-list catches what it is for', () => {
    for (const f of ['token', 'resetCode', 'inviteLink', 'tokenHash', 'sessionId', 'clientSecret', 'acceptUrl', 'recoveryCodes'])
      expect(SECRET_LOOKING.test(f)).toBe(true)
  })

  test('a kind stores exactly its declared fields: an extra one (a token, say) is refused on write', () => {
    for (const kind of NOTIFICATION_KIND_NAMES) {
      const schema = notificationKinds[kind].fields
      expect(schema.safeParse({ token: 'rcp_pat_x' }).success).toBe(false)
    }
    expect(() =>
      notificationKinds['tenant.invitation_received'].fields.parse({
        invitationId: crypto.randomUUID(),
        tenantName: 't',
        role: 'viewer',
        expiresAt: new Date().toISOString(),
        link: 'https://x/invitations/accept?token=abc',
      }),
    ).toThrow()
  })

  test('every kind has a line for its mail and the console', () => {
    expect(lineOf('account.new_sign_in', { method: 'sso', client: 'Chrome on macOS', network: '203.0.113.0/24' })).toBe(
      'A sign-in (sso) from a new client: Chrome on macOS, network 203.0.113.0/24',
    )
    for (const kind of NOTIFICATION_KIND_NAMES) expect(typeof notificationKinds[kind].mailByDefault).toBe('boolean')
  })
})

describe('what a client is', () => {
  test('a user-agent family: browser and system, or the tool', () => {
    expect(clientFamily('Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0')).toBe('Firefox on Linux')
    expect(clientFamily('Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0 Safari/537.36')).toBe(
      'Chrome on macOS',
    )
    expect(clientFamily('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0 Safari/537.36 Edg/119.0')).toBe(
      'Edge on Windows',
    )
    expect(
      clientFamily('Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1'),
    ).toBe('Safari on iOS')
    expect(clientFamily('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 Safari/537.36')).toBe(
      'Chrome on Linux',
    )
    expect(clientFamily('curl/8.4.0')).toBe('curl')
    expect(clientFamily(null)).toBe('unknown client')
    expect(clientFamily('')).toBe('unknown client')
  })

  test('a network: IPv4 /24, IPv6 /48', () => {
    expect(clientNetwork('203.0.113.77')).toBe('203.0.113.0/24')
    expect(clientNetwork('::ffff:198.51.100.9')).toBe('198.51.100.0/24')
    expect(clientNetwork('2001:db8:1:2::7')).toBe('2001:db8:1::/48')
    expect(clientNetwork('2001:0db8::1')).toBe('2001:db8:0::/48')
    expect(clientNetwork('::1')).toBe('0:0:0::/48')
    expect(clientNetwork(null)).toBe('unknown network')
    expect(clientNetwork('unknown')).toBe('unknown network')
  })
})
