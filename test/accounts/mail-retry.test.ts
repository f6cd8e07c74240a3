import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { AddressInfo } from 'node:net'
import nodemailer from 'nodemailer'
import { SMTPServer } from 'smtp-server'
import { loadConfig } from '../../api/platform/config'
import { deriveKeys } from '../../api/platform/deps'
import { createDb, type Sql } from '../../api/platform/db'
import { createLogger } from '../../api/platform/log'
import { enqueueMail, MailDispatcher } from '../../api/mail/service'
import { TemporalClient } from '../../api/platform/temporal'
import { mailWorkflowId } from '../../workflows/contract-mail'
import { startWorker, type RunningWorker } from '../../worker/run'
import { eventually } from '../support/temporal'
import { mailTo } from './helpers'

// An SMTP relay that answers 451 (try later) to the first message, then forwards to the catcher; and a worker of our
// own (its own task-queue prefix) that sends through it. Proves a refusal is retried until the send gets through; the
// backoff over the hour of retries, and the row marked failed after the last, are test/unit/workflows/mail.test.ts
// (time skipping): one refusal here waits out the first interval (2 s) only.
let relay: SMTPServer
let accepted = 0
let refused = 0
/** Why the relay could not hand a message on to the catcher, for the failure's message. */
const forwardErrors: string[] = []
let worker: RunningWorker
let sql: Sql
let config: ReturnType<typeof loadConfig>
beforeAll(async () => {
  const catcher = nodemailer.createTransport(process.env.SMTP_URL!)
  relay = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    closeTimeout: 1000,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        if (refused < 1) {
          refused++
          return callback(Object.assign(new Error('greylisted, try again later'), { responseCode: 451 }))
        }
        const envelope = { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address) }
        catcher.sendMail({ envelope, raw: Buffer.concat(chunks) }).then(
          () => {
            accepted++
            callback()
          },
          (err) => {
            forwardErrors.push(String(err))
            callback(err)
          },
        )
      })
    },
  })
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve))
  const port = (relay.server.address() as AddressInfo).port
  config = loadConfig({
    ...process.env,
    LOG_LEVEL: 'silent',
    SMTP_URL: `smtp://127.0.0.1:${port}`,
    TEMPORAL_TASK_QUEUE_PREFIX: `mail-retry-${crypto.randomUUID().slice(0, 8)}`,
    WORKER_TASK_QUEUES: 'mail',
  })
  sql = createDb(config.DATABASE_URL, { max: 4 })
  worker = await startWorker(config, { sql, schedules: false, log: createLogger('silent') })
}, 120_000)
afterAll(async () => {
  await worker?.shutdown()
  await sql?.end({ timeout: 5 })
  await new Promise<void>((resolve) => relay.close(() => resolve()))
})

describe('mail delivery retries', () => {
  test('a temporary SMTP refusal is retried until the message is accepted, then the row is marked sent', async () => {
    const to = `retry-${crypto.randomUUID()}@example.test`
    const queued = await sql.begin((tx) =>
      enqueueMail(tx, { to, template: 'initialPassword', data: { password: 'x', tenantName: 'Retry Co' } }, deriveKeys(config.SECRET_KEY)),
    )
    const temporal = new TemporalClient(config)
    // The dispatcher logs a failed start and leaves the row to the sweep, which runs a minute later in a worker
    // of the shared queue (not this test's relay): a start that fails on a loaded machine is dispatched again
    // here, as the sweep would, and a message that does not arrive says what the dispatcher and the relay saw.
    const warnings: string[] = []
    const dispatcher = new MailDispatcher(
      temporal,
      config,
      createLogger('warn', {}, (line) => warnings.push(line)),
    )
    try {
      const started = async () =>
        (await temporal.get()).workflow
          .getHandle(mailWorkflowId(queued.id))
          .describe()
          .then(
            () => true,
            () => false,
          )
      await dispatcher.dispatch([queued])
      for (let again = 0; again < 2 && !(await started()); again++) await dispatcher.dispatch([queued])
      const mail = await mailTo(to, { subject: /Retry Co/, timeoutMs: 40_000 }).catch(async (err: Error) => {
        throw new Error(
          `${err.message}; the workflow ${(await started()) ? 'was' : 'was not'} started (dispatcher: ${warnings.join('; ') || 'no warning'}); ` +
            `the relay refused ${refused}, passed on ${accepted}, could not pass on: ${forwardErrors.join('; ') || 'none'}`,
        )
      })
      expect(mail.subject).toContain('Retry Co')
    } finally {
      await temporal.close()
    }
    expect(refused).toBe(1)
    expect(accepted).toBe(1)
    const row = await eventually(
      'the row marked sent',
      async () => (await sql`select sent_at, sealed_data from mail_outbox where id = ${queued.id} and sent_at is not null`)[0],
    )
    expect(row.sealed_data).toBeNull()
  }, 60_000)
})
