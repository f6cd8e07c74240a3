// The PAT hot path does not pay for TOKEN_NOT_FOUND: the retired-digest lookup (retired_credentials) runs only after a
// cache miss whose lookup found no live row. A stand-in connection records every statement the resolver sends.
import { describe, expect, test } from 'bun:test'
import type { PatRow } from '../../api/api-keys/queries'
import { CredentialCache } from '../../api/credentials/cache'
import type { LastUsedRecorder } from '../../api/credentials/last-used'
import { type PatEntry, resolvePrincipal } from '../../api/credentials/service'
import { ApiError } from '../../api/platform/errors'
import type { Db } from '../../api/platform/db'
import { newPat } from '../../api/identity/tokens'

const DAY = 86_400_000

function patRow(): PatRow {
  return {
    id: crypto.randomUUID(),
    name: 'ci',
    tenant_id: crypto.randomUUID(),
    user_id: crypto.randomUUID(),
    membership_id: crypto.randomUUID(),
    scopes: ['tenant:read'],
    expires_at: new Date(Date.now() + DAY),
    revoked_at: null,
    last_used_at: null,
    role: 'viewer',
    membership_status: 'active',
    membership_expires_at: null,
    user_status: 'active',
    tenant_lifecycle: 'active',
    project_id: null,
    project_role: null,
    project_grant: null,
    project_deny: null,
    project_expires_at: null,
    subscription_status: null,
    operator_blocked: null,
  }
}

/** A connection whose api_keys lookup finds `live` and whose retired lookup finds `retired`; it keeps what it was sent. */
function standIn(live: PatRow | undefined, retired: boolean) {
  const sent: string[] = []
  const sql = ((strings: TemplateStringsArray) => {
    const text = strings.join('?')
    sent.push(/retired_credentials/.test(text) ? 'retired' : /api_keys/.test(text) ? 'api_keys' : text)
    if (/retired_credentials/.test(text)) return Promise.resolve(retired ? [{ '?column?': 1 }] : [])
    return Promise.resolve(live ? [live] : [])
  }) as unknown as Db
  const pats = new CredentialCache<PatEntry>({ fenceMs: 60_000, ttlMs: 60_000, maxEntries: 100 })
  pats.feedStarted()
  pats.confirm(pats.now())
  const lastUsed = { record() {} } as unknown as LastUsedRecorder
  return { deps: { sql, pats, lastUsed }, sent }
}

const codeOf = async (p: unknown) => {
  try {
    await p
    return 'ok'
  } catch (e) {
    return e instanceof ApiError ? e.code : String(e)
  }
}

describe('the retired-digest lookup stays off the hot path', () => {
  test('a valid PAT: one api_keys lookup on the miss, nothing at all on the hit, never the retired table', async () => {
    const { deps, sent } = standIn(patRow(), true)
    const { token } = newPat()
    expect(await codeOf(resolvePrincipal(deps, { bearer: token }))).toBe('ok')
    const hit = resolvePrincipal(deps, { bearer: token })
    expect(hit instanceof Promise).toBe(false)
    expect(sent).toEqual(['api_keys'])
  })

  test('an unknown PAT asks the retired table after the live lookup; retired is TOKEN_NOT_FOUND, else UNAUTHORIZED', async () => {
    const retired = standIn(undefined, true)
    expect(await codeOf(resolvePrincipal(retired.deps, { bearer: newPat().token }))).toBe('TOKEN_NOT_FOUND')
    expect(retired.sent).toEqual(['api_keys', 'retired'])
    const unknown = standIn(undefined, false)
    expect(await codeOf(resolvePrincipal(unknown.deps, { bearer: newPat().token }))).toBe('UNAUTHORIZED')
    expect(unknown.sent).toEqual(['api_keys', 'retired'])
  })

  test('a PAT as the session cookie: TOKEN_MALFORMED only when it is a stored record, and never cached', async () => {
    const stored = standIn(patRow(), false)
    const { token } = newPat()
    expect(await codeOf(resolvePrincipal(stored.deps, { cookie: token }))).toBe('TOKEN_MALFORMED')
    expect(stored.deps.pats.size).toBe(0)
    expect(await codeOf(resolvePrincipal(standIn(undefined, false).deps, { cookie: token }))).toBe('UNAUTHORIZED')
  })
})
