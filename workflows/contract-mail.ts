// The mail part of the Temporal contract (see contract.ts for the rules). Types and constants only.
export const MailWorkflowType = {
  send: 'sendMailWorkflow',
  sweep: 'mailSweepWorkflow',
} as const

/** One workflow per outbox row, so a second start for the same row (API and sweep racing) is refused. */
export const mailWorkflowId = (outboxId: string) => `mail/${outboxId}`
export const mailSweepScheduleId = (config: { TEMPORAL_TASK_QUEUE_PREFIX: string }) => `${config.TEMPORAL_TASK_QUEUE_PREFIX}-mail-sweep`

export const MailErrorType = {
  /** The row is gone or its template unknown: retrying cannot help. */
  undeliverable: 'MailUndeliverable',
} as const

export interface SendMailInput {
  outboxId: string
}

export interface SendMailResult {
  outcome: 'sent' | 'already_sent' | 'failed'
}

export interface MailSweepResult {
  restarted: number
  throttlesPurged: number
}

/** An unsent row older than this is assumed to have lost its start after commit. */
export const MAIL_STALE_SECONDS = 60
export const MAIL_SWEEP_EVERY_MS = 60_000
