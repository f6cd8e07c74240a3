import { writeSync } from 'node:fs'

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

/** The process's standard output, a batch at a time: the lines written while the event loop runs one turn go out in
 *  one write on the next, so a busy API pays one stream write (and one syscall) per turn rather than per access log
 *  line. The logger's lines keep their order (a direct console.log may land before lines held from the same turn);
 *  what is still held when the process exits is written synchronously on its way out. A process killed outright
 *  (SIGKILL) loses at most one turn of lines. */
export function stdoutLines(): (line: string) => void {
  let held = ''
  let scheduled = false
  const flush = () => {
    scheduled = false
    const out = held
    held = ''
    if (out) process.stdout.write(out)
  }
  process.once('exit', () => {
    try {
      if (held) writeSync(1, held)
    } catch {
      /* stdout closed or full on the way out: nothing left to tell */
    }
    held = ''
  })
  return (line) => {
    held += `${line}\n`
    if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
}

let processStdout: ((line: string) => void) | undefined
const toStdout = (line: string) => (processStdout ??= stdoutLines())(line)

export function createLogger(level: LogLevel = 'info', base: Fields = {}, write: (line: string) => void = toStdout): Logger {
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
