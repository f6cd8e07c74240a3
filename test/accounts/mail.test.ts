import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { deriveKeys, type DerivedKeys } from '../../api/platform/deps'
import { createDb, type Sql } from '../../api/platform/db'
import { enqueueMail } from '../../api/mail/service'
import { TENANT_ID } from '../../workflows/contract'
import { MailWorkflowType, mailSweepScheduleId, mailWorkflowId } from '../../workflows/contract-mail'
import { connectTemporal, eventually, type TestTemporal } from '../support/temporal'
import { startApi, type TestApi } from '../support/api'
import { tenantOwner } from '../support/fixtures'
import { mailTo } from './helpers'

let t: TestTemporal
let api: TestApi
let sql: Sql
let key: DerivedKeys
beforeAll(async () => {
  ;[t, api] = await Promise.all([connectTemporal(), startApi()])
  sql = createDb(t.config.DATABASE_URL, { max: 2 })
  key = deriveKeys(t.config.SECRET_KEY)
})
afterAll(async () => {
  await sql.end({ timeout: 5 })
  await Promise.all([t.close(), api.stop()])
})

const to = () => `mail-${crypto.randomUUID()}@example.test`
const outbox = async (id: string) => (await sql`select sent_at, failed_at, sealed_data, last_error from mail_outbox where id = ${id}`)[0]!

describe('mail outbox', () => {
  test('a committed row is sent by mail/<id> (TenantId set), marked sent, and its sealed data dropped', async () => {
    const { tenantId } = await tenantOwner(api.url)
    const rcpt = to()
    const queued = await sql.begin((tx) =>
      enqueueMail(
        tx,
        { to: rcpt, tenantId, template: 'passwordReset', data: { link: 'https://x.example/r?token=SECRETLINK', code: '12345678', minutes: 15 } },
        key,
      ),
    )
    // While queued, the code is only there sealed.
    expect(JSON.stringify(await sql`select * from mail_outbox where id = ${queued.id}`)).not.toContain('12345678')
    await api.deps.mail.dispatch([queued])
    const mail = await mailTo(rcpt, { subject: /Reset your/ })
    expect(mail.text).toContain('12345678')
    expect(mail.html).toContain('<b>12345678</b>')

    const handle = t.client.workflow.getHandle(mailWorkflowId(queued.id))
    expect(await handle.result()).toEqual({ outcome: 'sent' })
    const d = await handle.describe()
    expect(d.type).toBe(MailWorkflowType.send)
    expect(d.typedSearchAttributes.get(TENANT_ID)).toBe(tenantId)
    const row = await outbox(queued.id)
    expect(row.sent_at).not.toBeNull()
    expect(row.sealed_data).toBeNull()
    // A second start for the same row is refused by the workflow id, not sent twice.
    await api.deps.mail.dispatch([queued])
  })

  test('a row whose start after commit was lost is sent by the sweep', async () => {
    const rcpt = to()
    const queued = await sql.begin((tx) => enqueueMail(tx, { to: rcpt, template: 'initialPassword', data: { password: 'p', tenantName: 'Lost & Found' } }, key))
    await sql`update mail_outbox set created_at = now() - interval '2 minutes' where id = ${queued.id}`
    // No dispatch: as if the API died right after the commit. Trigger the schedule instead of waiting a minute.
    const schedule = t.client.schedule.getHandle(mailSweepScheduleId(t.config))
    await eventually('the mail sweep schedule', () => schedule.describe())
    await schedule.trigger()
    const mail = await mailTo(rcpt, { subject: /Lost & Found/ })
    expect(mail.html).toContain('Lost &#38; Found')
    await eventually('the row marked sent', async () => ((await outbox(queued.id)).sent_at ? true : undefined))
  })

  test('an undeliverable row is given up at once and left alone by the sweep', async () => {
    const [row] = await sql`insert into mail_outbox (recipient, template, sealed_data) values (${to()}, 'noSuchTemplate', '\\x00') returning id`
    const handle = await t.client.workflow.start(MailWorkflowType.send, {
      workflowId: mailWorkflowId(row!.id),
      taskQueue: `${t.config.TEMPORAL_TASK_QUEUE_PREFIX}-mail`,
      args: [{ outboxId: row!.id }],
      typedSearchAttributes: [{ key: TENANT_ID, value: '-' }],
      workflowExecutionTimeout: '1 minute',
    })
    expect(await handle.result()).toEqual({ outcome: 'failed' })
    const r = await outbox(row!.id)
    expect(r.failed_at).not.toBeNull()
    expect(r.last_error).toContain('noSuchTemplate')
  })
})
