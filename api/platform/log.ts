// Structured JSON logs, one object a line. Values under secret-looking keys are replaced before writing,
// so a careless `log.info({ body })` cannot leak a password or token.
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 } as const
export type LogLevel = keyof typeof LEVELS
type Fields = Record<string, unknown>

const SECRET_KEY = /pass(word)?|secret|token|authorization|cookie|otp|code$|recovery|credential|signature|private/i

// Every access log line asks about the same few keys, so a key's verdict is kept once known (up to a bound, since a
// logged object may carry keys nobody chose) rather than tested again on every line.
const verdicts = new Map<string, boolean>()
const MAX_VERDICTS = 1024
function isSecretKey(key: string): boolean {
  let secret = verdicts.get(key)
  if (secret === undefined) {
    secret = SECRET_KEY.test(key)
    if (verdicts.size < MAX_VERDICTS) verdicts.set(key, secret)
  }
  return secret
}

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value
  if (value instanceof Error) return { name: value.name, message: value.message }
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1))
  const out: Fields = {}
  for (const k of Object.keys(value)) {
    const v = (value as Fields)[k]
    out[k] = isSecretKey(k) ? '[redacted]' : v === null || typeof v !== 'object' ? v : redact(v, depth + 1)
  }
  return out
}

export interface Logger {
  debug(msg: string, fields?: Fields): void
  info(msg: string, fields?: Fields): void
  warn(msg: string, fields?: Fields): void
  error(msg: string, fields?: Fields): void
  child(fields: Fields): Logger
}

export function createLogger(level: LogLevel = 'info', base: Fields = {}, write: (line: string) => void = (l) => process.stdout.write(l + '\n')): Logger {
  const min = LEVELS[level]
  const emit = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Fields) => {
    if (LEVELS[lvl] < min) return
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...(redact({ ...base, ...fields }) as Fields) }))
  }
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  }
}
