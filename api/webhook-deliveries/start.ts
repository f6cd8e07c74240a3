// Starting delivery workflows for committed messages: the dispatcher, redeliveries and test events all go through
// here. A message's run has a fixed id and REJECT_DUPLICATE, so starting it twice (a retry, a second worker, the
// unstarted sweep racing the first start) never sends twice: "already started" counts as started.
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client'
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy } from '@temporalio/common'
import { taskQueues, TENANT_ID } from '../../workflows/contract'
import { WebhookWorkflowType, webhookWorkflowIds, type DeliverWebhookInput } from '../../workflows/contract-webhooks'
import type { Config } from '../platform/config'
import type { Db } from '../platform/db'
import { markMessagesStarted, type MessageRow } from './queries'

type StartConfig = Pick<Config, 'TEMPORAL_TASK_QUEUE_PREFIX' | 'WEBHOOK_RETRY_SCHEDULE' | 'WEBHOOK_RETRY_AFTER_MAX_SECONDS'>

/** Run 0 is the dispatch; run n the n-th redelivery. */
export function deliveryWorkflowId(m: Pick<MessageRow, 'endpoint_id' | 'event_type' | 'event_id' | 'redeliveries'>): string {
  const ids = { endpointId: m.endpoint_id, eventType: m.event_type, eventId: m.event_id }
  return m.redeliveries === 0 ? webhookWorkflowIds.delivery(ids) : webhookWorkflowIds.redelivery(ids, m.redeliveries)
}

const STARTS_IN_FLIGHT = 32

/** Starts each message's run and marks the started ones. A start that fails is left unmarked for the dispatcher's
 *  sweep; answers how many are running now. */
export async function startDeliveries(client: Client, db: Db, config: StartConfig, messages: MessageRow[]): Promise<number> {
  const started: string[] = []
  let next = 0
  const startOne = async (m: MessageRow) => {
    const input: DeliverWebhookInput = {
      tenantId: m.tenant_id,
      messageId: m.id,
      scheduleMs: config.WEBHOOK_RETRY_SCHEDULE,
      retryAfterMaxMs: config.WEBHOOK_RETRY_AFTER_MAX_SECONDS * 1000,
    }
    try {
      await client.workflow.start(WebhookWorkflowType.deliver, {
        workflowId: deliveryWorkflowId(m),
        taskQueue: taskQueues(config).webhooks,
        args: [input],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
        typedSearchAttributes: [{ key: TENANT_ID, value: m.tenant_id }],
      })
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err
    }
    started.push(m.id)
  }
  const errors: unknown[] = []
  await Promise.all(
    Array.from({ length: Math.min(STARTS_IN_FLIGHT, messages.length) }, async () => {
      while (next < messages.length) await startOne(messages[next++]!).catch((err) => errors.push(err))
    }),
  )
  await markMessagesStarted(db, started)
  if (errors.length > 0) throw new AggregateError(errors, `${errors.length} of ${messages.length} delivery workflows did not start`)
  return started.length
}
