// Object keys a tenant names in requests (checkpoint paths, bundle prefixes, training outputs). A key is always
// read in the tenant's own general bucket, so anything that could mean another place is refused rather than
// normalised: a client that writes `../x` or `s3://bucket/x` meant something we will not do.

const MAX_KEY_BYTES = 1024
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/
// Our own bucket names (bucketNameFor): a key starting with one is a bucket-qualified path.
const BUCKET_NAME = /^rcp-[0-9a-f]{20}-(general|dataset|export)$/
const CONTROL = /[\u0000-\u001f\u007f]/

/** Why `key` cannot name an object in the tenant's general bucket, or null when it can. A trailing `/` is
 *  allowed only where `prefix` is true. */
export function objectKeyProblem(key: string, opts: { prefix?: boolean } = {}): string | null {
  if (key.length === 0) return 'is empty'
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) return `is longer than ${MAX_KEY_BYTES} bytes`
  if (key.startsWith('/')) return 'is absolute (starts with /)'
  if (key.includes('\\')) return 'contains a backslash'
  if (CONTROL.test(key)) return 'contains a control character'
  if (SCHEME.test(key)) return "names a scheme or another bucket (keys are relative to the tenant's general bucket)"
  const segments = (opts.prefix && key.endsWith('/') ? key.slice(0, -1) : key).split('/')
  if (segments.some((s) => s === '..' || s === '.')) return 'contains a . or .. segment'
  if (segments.some((s) => s === '')) return 'contains an empty segment (//) or ends with /'
  if (BUCKET_NAME.test(segments[0]!)) return "starts with a bucket name (keys are relative to the tenant's general bucket)"
  return null
}

// The same rules as ECMA-262 patterns, for the OpenAPI document (test/unit/openapi-constraints.test.ts holds them against
// objectKeyProblem): segments of anything but `/`, a backslash or a control character, joined by single slashes; lookaheads
// refuse a scheme, a bucket name as the first segment, and a `.` or `..` segment. `[\s\S]`, not `.`, so a line separator
// (U+2028) cannot hide a dot segment. Byte length is not a pattern's to state: the schema's maxLength counts characters.
const SEGMENT = String.raw`[^/\\\u0000-\u001f\u007f]+`
const REFUSED_STARTS = String.raw`(?![A-Za-z][A-Za-z0-9+.-]*:)(?!rcp-[0-9a-f]{20}-(?:general|dataset|export)(?:/|$))(?!\.\.?(?:/|$))(?![\s\S]*/\.\.?(?:/|$))`
/** A key objectKeyProblem takes (byte length aside). */
export const OBJECT_KEY_PATTERN = `^${REFUSED_STARTS}${SEGMENT}(?:/${SEGMENT})*$`
/** A prefix objectKeyProblem takes with `prefix: true` (one trailing slash allowed; byte length aside). */
export const OBJECT_PREFIX_PATTERN = `^${REFUSED_STARTS}${SEGMENT}(?:/${SEGMENT})*/?$`

/** A prefix with exactly one trailing slash, so `prefix + key` never joins two names. */
export const asPrefix = (prefix: string) => (prefix.endsWith('/') ? prefix : `${prefix}/`)
