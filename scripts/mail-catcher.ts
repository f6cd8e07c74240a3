/**
 * A local SMTP catcher: accepts every message (no auth, no TLS) and shows it over HTTP, so sign-up and
 * notification mail can be read in development and asserted on in tests.
 *
 *   GET    /api/messages?to=<addr>   newest first
 *   GET    /api/messages/<id>
 *   DELETE /api/messages
 *   GET    /                        an HTML inbox
 *
 * Run standalone: bun scripts/mail-catcher.ts  (MAIL_SMTP_PORT, MAIL_HTTP_PORT, MAIL_FILE)
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { dirname } from 'node:path'
import { simpleParser, type AddressObject } from 'mailparser'
import { SMTPServer } from 'smtp-server'

export interface Message {
  id: string
  from: string
  /** Envelope recipients, lower-cased: who the message was delivered to, Bcc included. */
  to: string[]
  subject: string
  text: string
  html: string | null
  /** When the catcher received it (ISO 8601). */
  date: string
}

export interface MailCatcher {
  smtpUrl: string
  httpUrl: string
  smtpPort: number
  httpPort: number
  messages(): Message[]
  stop(): Promise<void>
}

export interface MailCatcherOptions {
  smtpPort?: number
  httpPort?: number
  host?: string
  /** JSON-lines file the messages are appended to and reloaded from, so dev mail survives a restart. */
  file?: string
}

const MAX_MESSAGE_BYTES = 10 * 1024 * 1024

const addressText = (a: AddressObject | AddressObject[] | undefined) => (Array.isArray(a) ? a.map((x) => x.text).join(', ') : a?.text) ?? ''

function load(file: string | undefined): Message[] {
  if (!file || !existsSync(file)) return []
  const out: Message[] = []
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue
    try {
      out.push(JSON.parse(line) as Message)
    } catch {
      /* a line torn by a crash: skip it */
    }
  }
  return out
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

function inboxPage(messages: Message[]): string {
  const rows = messages
    .map(
      (m) => `
    <details>
      <summary><time>${escapeHtml(m.date)}</time> <b>${escapeHtml(m.subject || '(no subject)')}</b>
        <span>${escapeHtml(m.from)} &rarr; ${escapeHtml(m.to.join(', '))}</span></summary>
      <pre>${escapeHtml(m.text)}</pre>
      <a href="/api/messages/${encodeURIComponent(m.id)}">JSON</a>
    </details>`,
    )
    .join('')
  // The HTML bodies are never rendered: mail content is untrusted and this page is served on localhost.
  return `<!doctype html><html><head><meta charset="utf-8"><title>Mail catcher (${messages.length})</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:60em}details{border-bottom:1px solid #ddd;padding:.5em 0}
summary{cursor:pointer}time,span{color:#666;margin:0 .5em}pre{white-space:pre-wrap;background:#f6f6f6;padding:1em}</style></head>
<body><h1>Mail catcher</h1><p>${messages.length} message(s), newest first.
<button onclick="fetch('/api/messages',{method:'DELETE'}).then(()=>location.reload())">Delete all</button></p>${rows || '<p>No mail yet.</p>'}</body></html>`
}

export async function startMailCatcher(opts: MailCatcherOptions = {}): Promise<MailCatcher> {
  const host = opts.host ?? '127.0.0.1'
  const store: Message[] = load(opts.file)
  if (opts.file) mkdirSync(dirname(opts.file), { recursive: true })

  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    closeTimeout: 2000, // stop() should not wait 30 s for an idle client to hang up
    size: MAX_MESSAGE_BYTES,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          const message: Message = {
            id: crypto.randomUUID(),
            from: addressText(mail.from) || (session.envelope.mailFrom ? session.envelope.mailFrom.address : ''),
            to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
            subject: mail.subject ?? '',
            text: mail.text ?? '',
            html: typeof mail.html === 'string' ? mail.html : null,
            date: new Date().toISOString(),
          }
          store.push(message)
          if (opts.file) appendFileSync(opts.file, `${JSON.stringify(message)}\n`)
          callback()
        })
        .catch((err: Error) => callback(err))
    },
  })
  const smtpPort = await new Promise<number>((resolve, reject) => {
    smtp.once('error', reject)
    smtp.listen(opts.smtpPort ?? 0, host, () => resolve((smtp.server.address() as AddressInfo).port))
  })
  // Client errors (a test closing its socket early) must not take the catcher down.
  smtp.on('error', () => {})

  const json = (body: unknown, status = 200) => Response.json(body, { status })
  const http = Bun.serve({
    hostname: host,
    port: opts.httpPort ?? 0,
    fetch(req) {
      const url = new URL(req.url)
      if (url.pathname === '/api/messages' && req.method === 'GET') {
        const to = url.searchParams.get('to')?.trim().toLowerCase()
        return json(store.filter((m) => !to || m.to.includes(to)).reverse())
      }
      if (url.pathname === '/api/messages' && req.method === 'DELETE') {
        store.length = 0
        if (opts.file) writeFileSync(opts.file, '')
        return new Response(null, { status: 204 })
      }
      const one = /^\/api\/messages\/([^/]+)$/.exec(url.pathname)
      if (one && req.method === 'GET') {
        const m = store.find((x) => x.id === decodeURIComponent(one[1]!))
        return m ? json(m) : json({ error: 'not found' }, 404)
      }
      if (url.pathname === '/' && req.method === 'GET') {
        return new Response(inboxPage([...store].reverse()), { headers: { 'content-type': 'text/html; charset=utf-8' } })
      }
      return json({ error: 'not found' }, 404)
    },
  })

  return {
    smtpUrl: `smtp://${host}:${smtpPort}`,
    httpUrl: `http://${host}:${http.port}`,
    smtpPort,
    httpPort: http.port!,
    messages: () => [...store].reverse(),
    async stop() {
      await http.stop(true)
      await new Promise<void>((resolve) => smtp.close(() => resolve()))
    },
  }
}

if (import.meta.main) {
  const port = (name: string, def: number) => Number(process.env[name] ?? def)
  const catcher = await startMailCatcher({
    smtpPort: port('MAIL_SMTP_PORT', 1025),
    httpPort: port('MAIL_HTTP_PORT', 1080),
    file: process.env.MAIL_FILE,
  })
  console.log(`mail catcher: SMTP ${catcher.smtpUrl}, inbox ${catcher.httpUrl}`)
  const stop = () => void catcher.stop().then(() => process.exit(0))
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}
