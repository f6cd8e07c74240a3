// workflows/mail.ts on the time-skipping server: an SMTP refusal is retried for about an hour (2 s doubling to
// 10 minutes, 12 attempts) before the row is marked failed; an undeliverable row is marked failed at once.
import { describe, expect, test } from 'bun:test'
import { ApplicationFailure } from '@temporalio/common'
import { MailErrorType } from '../../../workflows/contract-mail'
import { backoffSeconds, useTimeSkipping } from '../support/time-skipping'

const ts = useTimeSkipping('mail')

function standIns(send: (n: number) => 'sent') {
  let n = 0
  return {
    async sendOutboxMail(id: string) {
      await ts.calls.record('send', id)
      return send(++n)
    },
    async markOutboxMailFailed(id: string, reason: string) {
      await ts.calls.record('failed', id, reason)
    },
  }
}

const run = (taskQueue: string) =>
  ts.env.client.workflow.execute('sendMailWorkflow', { taskQueue, workflowId: `mail/${crypto.randomUUID()}`, args: [{ outboxId: 'o1' }] })

describe('sending one outbox row', () => {
  test('a refusing SMTP server is retried 12 times over about an hour, backing off to 10 minutes, then the row is marked failed', async () => {
    ts.calls.clear()
    const result = await ts.withWorker(
      standIns(() => {
        throw new Error('421 try again later')
      }),
      run,
    )
    expect(result).toEqual({ outcome: 'failed' })
    expect(ts.calls.of('send').length).toBe(12)
    expect(ts.calls.gapsOf('send', backoffSeconds(2, 600, 11))).toEqual(backoffSeconds(2, 600, 11))
    expect(ts.calls.of('failed').map((c) => c.args)).toEqual([['o1', '421 try again later']])
    // Marked failed after the last attempt, not before.
    expect(ts.calls.of('failed')[0]!.at).toBeGreaterThanOrEqual(ts.calls.of('send').at(-1)!.at)
  }, 60_000)

  test('a server back within the hour gets the mail sent: no failure recorded', async () => {
    ts.calls.clear()
    const result = await ts.withWorker(
      standIns((n) => {
        if (n < 8) throw new Error('421')
        return 'sent'
      }),
      run,
    )
    expect(result).toEqual({ outcome: 'sent' })
    expect(ts.calls.gapsOf('send', backoffSeconds(2, 600, 7))).toEqual(backoffSeconds(2, 600, 7))
    expect(ts.calls.of('failed')).toEqual([])
  }, 60_000)

  test('an undeliverable row is not retried', async () => {
    ts.calls.clear()
    const result = await ts.withWorker(
      standIns(() => {
        throw ApplicationFailure.create({ type: MailErrorType.undeliverable, message: 'unknown template' })
      }),
      run,
    )
    expect(result).toEqual({ outcome: 'failed' })
    expect(ts.calls.of('send').length).toBe(1)
    expect(ts.calls.of('failed').map((c) => c.args)).toEqual([['o1', 'unknown template']])
  }, 60_000)
})
