import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client'
import { SYSTEM_TENANT, taskQueues, TENANT_ID } from '../../workflows/contract'
import { MailWorkflowType, mailWorkflowId, type SendMailInput } from '../../workflows/contract-mail'
import type { Config } from '../platform/config'
import { open, seal, type DerivedKeys } from '../platform/keyring'
import type { Db } from '../platform/db'
import type { Logger } from '../platform/log'
import type { TemporalClient } from '../platform/temporal'
import { insertOutbox } from './queries'
import type { MailData, MailTemplate } from './templates'

export interface OutgoingMail<T extends MailTemplate> {
  to: string
  template: T
  data: MailData<T>
  tenantId?: string | null
}

export interface QueuedMail {
  id: string
  tenantId: string | null
}

/** Writes the outbox row in the caller's transaction, so the mail exists exactly when the change that caused it
 *  commits. The data is sealed with the secrets key: it may hold a reset code. After commit, hand the result to
 *  `MailDispatcher.dispatch`; if that never happens (a crash), the mail sweep starts it a minute later. */
export async function enqueueMail<T extends MailTemplate>(tx: Db, mail: OutgoingMail<T>, keys: DerivedKeys): Promise<QueuedMail> {
  const sealedData = seal(keys, 'secrets', JSON.stringify(mail.data))
  const { id } = await insertOutbox(tx, { tenantId: mail.tenantId ?? null, to: mail.to, template: mail.template, sealedData })
  return { id, tenantId: mail.tenantId ?? null }
}

export const openMailData = (keys: DerivedKeys, sealed: Uint8Array): unknown => JSON.parse(open(keys, 'secrets', sealed))

/** Starts `sendMailWorkflow` (id mail/<outboxId>) for committed outbox rows. Failures are logged, never thrown:
 *  the row is committed, and the sweep schedule re-kicks unsent rows, so the caller's request has succeeded. The
 *  log line names the request whose mail it is (`ids`). */
export class MailDispatcher {
  constructor(
    private temporal: TemporalClient,
    private config: Config,
    private log: Logger,
  ) {}

  async dispatch(mails: QueuedMail[], ids?: Readonly<Record<string, string>>): Promise<void> {
    if (mails.length === 0) return
    try {
      const client = await this.temporal.get()
      await Promise.all(
        mails.map(async (m) => {
          try {
            await client.workflow.start(MailWorkflowType.send, {
              workflowId: mailWorkflowId(m.id),
              taskQueue: taskQueues(this.config).mail,
              args: [{ outboxId: m.id } satisfies SendMailInput],
              typedSearchAttributes: [{ key: TENANT_ID, value: m.tenantId ?? SYSTEM_TENANT }],
            })
          } catch (err) {
            if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err
          }
        }),
      )
    } catch (err) {
      this.log.warn('starting mail workflows failed; the sweep will retry', { ...ids, err, outboxIds: mails.map((m) => m.id) })
    }
  }
}
