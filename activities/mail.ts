import { ApplicationFailure } from '@temporalio/activity'
import nodemailer from 'nodemailer'
import { findOutbox, listStaleOutbox, markOutboxFailed, markOutboxSent } from '../api/mail/queries'
import { openMailData } from '../api/mail/service'
import { renderMail, isMailTemplate } from '../api/mail/templates'
import { purgeResetThrottles } from '../api/password-resets/queries'
import { MAIL_STALE_SECONDS, MailErrorType } from '../workflows/contract-mail'
import { inSpan, SpanKind } from '../api/platform/tracing'
import type { ActivityDeps } from './deps'

const undeliverable = (message: string) => ApplicationFailure.create({ type: MailErrorType.undeliverable, message, nonRetryable: true })

/** Every wait of one SMTP attempt ends well inside the send activity's start-to-close (1 minute, workflows/mail.ts),
 *  so a server that accepts the connection and then says nothing (one coming back up) costs an attempt seconds, and
 *  the retry finds it ready. nodemailer's own defaults (2 minutes to connect, 30 s for the greeting, 10 minutes of
 *  silence) let such an attempt hang until Temporal timed it out and then wait out the next backoff. */
export const SMTP_TIMEOUTS_MS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 } as const

// Transport settings go in the first argument: the second holds defaults for each message only.
export const smtpTransport = (smtpUrl: string, from: string) => nodemailer.createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS_MS }, { from })

export function mailActivities({ sql, config, log, keys, activityMetrics }: ActivityDeps) {
  // One SMTP transport per worker process.
  const transport = smtpTransport(config.SMTP_URL, config.MAIL_FROM)
  // The span names the server's host only: the URL may carry the SMTP credentials, the message a recipient.
  const smtp = URL.canParse(config.SMTP_URL) ? new URL(config.SMTP_URL) : undefined
  const smtpAttributes = smtp ? { 'server.address': smtp.hostname, 'server.port': Number(smtp.port || (smtp.protocol === 'smtps:' ? 465 : 587)) } : {}
  return {
    /** At least once: a crash between the SMTP answer and the UPDATE sends the message again on retry. */
    async sendOutboxMail(outboxId: string): Promise<'sent' | 'already_sent'> {
      const row = await findOutbox(sql, outboxId)
      if (!row) throw undeliverable(`outbox row ${outboxId} does not exist`)
      if (row.sent_at) return 'already_sent'
      if (row.failed_at || !row.sealed_data) throw undeliverable(`outbox row ${outboxId} was given up`)
      if (!isMailTemplate(row.template)) throw undeliverable(`unknown mail template ${row.template}`)
      const mail = renderMail(row.template, openMailData(keys, row.sealed_data))
      await inSpan('SMTP send', SpanKind.CLIENT, smtpAttributes, () =>
        transport.sendMail({ from: config.MAIL_FROM, to: row.recipient, subject: mail.subject, text: mail.text, html: mail.html }),
      )
      await markOutboxSent(sql, outboxId)
      activityMetrics.mail('sent')
      log.info('mail sent', { outboxId, template: row.template, tenantId: row.tenant_id })
      return 'sent'
    },

    async markOutboxMailFailed(outboxId: string, error: string): Promise<void> {
      await markOutboxFailed(sql, outboxId, error)
      activityMetrics.mail('failed')
      log.warn('mail given up', { outboxId, error })
    },

    async listStaleOutboxMail(): Promise<{ id: string; tenantId: string | null }[]> {
      const rows = await listStaleOutbox(sql, MAIL_STALE_SECONDS, 500)
      return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id }))
    },

    async purgeResetThrottles(): Promise<number> {
      return purgeResetThrottles(sql)
    },
  }
}
