import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common'
import { ActivityFailure, ParentClosePolicy, proxyActivities, startChild } from '@temporalio/workflow'
import type { Activities } from '../activities'
import { SYSTEM_TENANT, TENANT_ID } from './contract'
import { MailErrorType, MailWorkflowType, mailWorkflowId, type MailSweepResult, type SendMailInput, type SendMailResult } from './contract-mail'

// SMTP servers refuse for minutes at a time (greylisting, restarts): back off up to 10 minutes, about 1 hour in all.
const { sendOutboxMail } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '10 minutes',
    maximumAttempts: 12,
    nonRetryableErrorTypes: [MailErrorType.undeliverable],
  },
})
const { markOutboxMailFailed, listStaleOutboxMail, purgeResetThrottles } = proxyActivities<Activities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 5 },
})

/** Sends one outbox row and marks it sent; after the last retry it marks the row failed so the sweep leaves it. */
export async function sendMailWorkflow(input: SendMailInput): Promise<SendMailResult> {
  try {
    return { outcome: await sendOutboxMail(input.outboxId) }
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err
    await markOutboxMailFailed(input.outboxId, cause instanceof Error ? cause.message : String(cause))
    return { outcome: 'failed' }
  }
}

/** Every minute: restarts the send of rows whose start after commit was lost, and purges old reset throttles. */
export async function mailSweepWorkflow(): Promise<MailSweepResult> {
  const [stale, throttlesPurged] = await Promise.all([listStaleOutboxMail(), purgeResetThrottles()])
  let restarted = 0
  for (const row of stale) {
    try {
      await startChild(MailWorkflowType.send, {
        workflowId: mailWorkflowId(row.id),
        args: [{ outboxId: row.id } satisfies SendMailInput],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        typedSearchAttributes: [{ key: TENANT_ID, value: row.tenantId ?? SYSTEM_TENANT }],
      })
      restarted++
    } catch (err) {
      // Still running (retrying): leave it alone.
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err
    }
  }
  return { restarted, throttlesPurged }
}
