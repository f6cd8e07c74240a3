// The reference verifier of an export: from one NDJSON line it rebuilds the text audit_canonical (migrations/0016)
// hashed when the entry was written, and the entry's link. It needs nothing but node:crypto, so a customer can copy
// it (or port it) and check an export without trusting us:
//
//   for each entry line: linkHash(line.prevHash, line) === line.hash, and line.seq === previous line's seq + 1
//   where line.prevHash === previous line's hash; the trailer's chainHead names the head the export was cut at.
//
// The canonical form is a JSON array of the entry's columns as PostgreSQL renders jsonb: ", " between items,
// "key": value inside objects, object keys ordered by their UTF-8 length and then bytewise, strings escaped as
// JSON.stringify escapes them, numbers in plain decimal (no exponent), the time as integer microseconds.
import { createHash } from 'node:crypto'

/** One entry line of an export: the API's entry, plus what its link covers and the API does not show. */
export interface ExportLine {
  id: string
  seq: number
  /** The chain the entry is numbered in: the tenant's id for every line of a tenant export. */
  chain: string
  occurredAt: string
  /** The stored time exactly (an ISO time keeps only milliseconds). */
  occurredAtMicros: number
  tenantId: string | null
  subjectUserId: string | null
  actor: { type: string; id: string | null; label: string | null; credentialId: string | null }
  action: string
  target: { type: string; id: string | null } | null
  outcome: string
  reason: string | null
  ip: string | null
  userAgent: string | null
  requestId: string | null
  changes: Record<string, unknown> | null
  details: Record<string, unknown> | null
  hash: string
  /** The hash of the entry numbered seq - 1 (hex); null at the chain's start (seq 1), or when that entry is gone. */
  prevHash: string | null
  /** The second form (entries sealed since migrations/0091): the personal part's nonce (hex, null once an erasure or a
   *  tenant deletion blanked the part) and its SHA-256 (hex), which the link covers in place of the label, ip and
   *  user agent. Both null for the first form. */
  personalNonce?: string | null
  personalDigest?: string | null
}

export interface ExportTrailer {
  type: 'trailer'
  entries: number
  chainHead: { seq: number; hash: string | null }
}

const utf8 = (s: string) => Buffer.from(s, 'utf8')

/** jsonb orders an object's keys by length, then bytes (not by insertion, not alphabetically). */
const jsonbKeyOrder = (a: string, b: string) => {
  const x = utf8(a)
  const y = utf8(b)
  return x.length - y.length || Buffer.compare(x, y)
}

/** A number as PostgreSQL's numeric prints it: JSON.stringify's shortest digits, but never an exponent. */
function numericText(n: number): string {
  const s = String(n)
  const m = /^(-?)(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(s)
  if (!m) return s
  const [, sign, int, frac = '', exp] = m
  const digits = int! + frac
  const point = int!.length + Number(exp)
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`
}

/** A JSON value as jsonb's text output renders it. */
export function jsonbText(v: unknown): string {
  if (v === null || v === undefined) return 'null'
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  if (typeof v === 'number') return numericText(v)
  if (typeof v === 'string') return JSON.stringify(v)
  if (Array.isArray(v)) return `[${v.map(jsonbText).join(', ')}]`
  const o = v as Record<string, unknown>
  return `{${Object.keys(o)
    .sort(jsonbKeyOrder)
    .map((k) => `${JSON.stringify(k)}: ${jsonbText(o[k])}`)
    .join(', ')}}`
}

/** The personal keys of details and changes (migrations/0091). */
const DETAILS_PERSONAL = 'email'
const CHANGES_PERSONAL = 'displayName'
const has = (o: Record<string, unknown> | null, k: string) => o !== null && Object.hasOwn(o, k)
/** jsonb's `o - k`. */
const without = (o: Record<string, unknown> | null, k: string) => {
  if (o === null) return null
  const { [k]: _, ...rest } = o
  return rest
}

/** audit_personal_digest(entry): sha256 of [nonce, label, ip, user agent, details.email, changes.displayName] as jsonb
 *  text, hex. */
export function personalDigestOf(line: ExportLine): string {
  const part = [
    line.personalNonce ?? null,
    line.actor.label,
    line.ip,
    line.userAgent,
    line.details?.[DETAILS_PERSONAL] ?? null,
    line.changes?.[CHANGES_PERSONAL] ?? null,
  ]
  return createHash('sha256')
    .update(utf8(jsonbText(part)))
    .digest('hex')
}

/** audit_personal_ok(entry): a second-form entry's personal part is blanked whole or matches its digest. */
export function personalPartOk(line: ExportLine): boolean {
  if (!line.personalDigest) return true
  if (!line.personalNonce) {
    return (
      line.actor.label === null && line.ip === null && line.userAgent === null && !has(line.details, DETAILS_PERSONAL) && !has(line.changes, CHANGES_PERSONAL)
    )
  }
  return personalDigestOf(line) === line.personalDigest
}

/** audit_canonical(entry): the columns in table order, the hash left out; in the second form the personal fields are
 *  null and the personal part's digest comes last. */
export function canonicalOf(line: ExportLine): string {
  if (line.personalDigest) {
    return jsonbText([
      line.id,
      line.chain,
      line.seq,
      line.occurredAtMicros,
      line.tenantId,
      line.subjectUserId,
      line.actor.type,
      line.actor.id,
      null,
      line.actor.credentialId,
      line.action,
      line.target?.type ?? null,
      line.target?.id ?? null,
      line.outcome,
      line.reason,
      null,
      null,
      line.requestId,
      without(line.changes, CHANGES_PERSONAL),
      without(line.details, DETAILS_PERSONAL),
      line.personalDigest,
    ])
  }
  return jsonbText([
    line.id,
    line.chain,
    line.seq,
    line.occurredAtMicros,
    line.tenantId,
    line.subjectUserId,
    line.actor.type,
    line.actor.id,
    line.actor.label,
    line.actor.credentialId,
    line.action,
    line.target?.type ?? null,
    line.target?.id ?? null,
    line.outcome,
    line.reason,
    line.ip,
    line.userAgent,
    line.requestId,
    line.changes,
    line.details,
  ])
}

const CHAIN_START = Buffer.alloc(32)

/** audit_link(prev, entry): sha256(previous hash || canonical form), hex; a chain starts from 32 zero bytes. */
export function linkHash(prevHashHex: string | null, line: ExportLine): string {
  const prev = prevHashHex === null ? CHAIN_START : Buffer.from(prevHashHex, 'hex')
  return createHash('sha256')
    .update(prev)
    .update(utf8(canonicalOf(line)))
    .digest('hex')
}
