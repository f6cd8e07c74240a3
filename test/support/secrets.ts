// Every secret the suite's flows create or send, collected as the test client sees them, so the end of each test file can
// search the whole audit trail for those it saw (test/support/preload.ts). A secret is what a field of that name holds, a
// session cookie, or a presigned URL; short values (TOTP codes) are left to the per-flow tests, where a 6-digit
// string cannot match by chance inside an unrelated hash.
import { createDb } from '../../api/platform/db'

const SECRET_FIELDS = new Set([
  'token',
  'secret',
  'password',
  'newPassword',
  'currentPassword',
  'initialPassword',
  'clientSecret',
  'csrfToken',
  'recoveryCodes',
  'reauthenticationCode',
  'otpauthUri',
  'otpauthUrl',
  'downloadUrl',
  'previousSecret',
])
const MIN_LENGTH = 10

export const seenSecrets = new Set<string>()
/** Those a scan of the run's database already looked for: a test worker runs several files in one global
 *  (scripts/test.ts), and each file's end looks only for what was seen since. */
const searched = new Set<string>()

/** The secrets seen since the last call, now counted as searched for. */
export function unsearchedSecrets(): string[] {
  const fresh = [...seenSecrets].filter((s) => !searched.has(s))
  for (const s of fresh) searched.add(s)
  return fresh
}

/** Which of `secrets` (all collected ones by default) the audit trail (entries and audit.entry events) of the
 *  database at `url` holds. */
export async function auditLeaks(url: string, secrets: Iterable<string> = seenSecrets): Promise<{ scanned: number; leaks: string[] }> {
  const wanted = [...secrets]
  const sql = createDb(url, { max: 1, name: 'rcp-secret-scan' })
  try {
    const rows = await sql<{ text: string }[]>`
      select a::text as text from audit_log a union all select i::text from audit_inbox i
      union all select data::text from events where type = 'audit.entry'`
    const leaks: string[] = []
    for (const { text } of rows) for (const s of wanted) if (text.includes(s)) leaks.push(`${s.slice(0, 12)}… in ${text.slice(0, 200)}`)
    return { scanned: rows.length, leaks }
  } finally {
    await sql.end()
  }
}

/** Scans of databases a test drops before its file ends, for the check at the file's end in preload.ts. */
export const otherScans: { scanned: number; leaks: string[] }[] = []

const keep = (v: unknown) => {
  if (typeof v === 'string' && v.length >= MIN_LENGTH) seenSecrets.add(v)
}

/** Walks a request or response body and keeps what secret-named fields hold, and every presigned URL. */
export function collectSecrets(value: unknown, field?: string): void {
  if (typeof value === 'string') {
    if ((field && SECRET_FIELDS.has(field)) || value.includes('X-Amz-Signature=')) keep(value)
    return
  }
  if (Array.isArray(value)) {
    for (const v of value) collectSecrets(v, field)
    return
  }
  if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) collectSecrets(v, k)
}

/** The token of a `Set-Cookie` header (a session cookie is a bearer secret). */
export function collectCookie(setCookie: string | null): void {
  const value = setCookie?.split(';')[0]?.split('=').slice(1).join('=')
  if (value) keep(decodeURIComponent(value))
}
