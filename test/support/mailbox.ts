/** Reads the mail the API sent, from the catcher scripts/test.ts starts (MAIL_CATCHER_URL). */
import type { Message } from '../../scripts/mail-catcher'

export type { Message }

function baseUrl(): string {
  const url = process.env.MAIL_CATCHER_URL
  if (!url) throw new Error('MAIL_CATCHER_URL is not set: run the suite with ./scripts/test')
  return url
}

// Mail is an outbox row sent by a workflow on the runner's worker: seconds on a quiet machine, more while the suite's
// parallel files load it, so the default wait is generous (a missing mail still fails, only later).
const MAIL_WAIT_MS = 30_000

/** The newest message to `to` (matching `subject`, received at or after `after`), polling until it arrives. */
export async function waitForMail(to: string, opts: { subject?: RegExp; timeoutMs?: number; after?: Date } = {}): Promise<Message> {
  const deadline = Date.now() + (opts.timeoutMs ?? MAIL_WAIT_MS)
  const url = `${baseUrl()}/api/messages?to=${encodeURIComponent(to)}`
  for (;;) {
    const res = await fetch(url)
    if (!res.ok) throw new Error(`mail catcher answered ${res.status}`)
    const found = ((await res.json()) as Message[]).find(
      (m) => (!opts.subject || opts.subject.test(m.subject)) && (!opts.after || new Date(m.date) >= opts.after),
    )
    if (found) return found
    if (Date.now() > deadline) {
      throw new Error(`no mail to ${to}${opts.subject ? ` with subject ${opts.subject}` : ''} within ${opts.timeoutMs ?? MAIL_WAIT_MS} ms`)
    }
    await Bun.sleep(100)
  }
}
