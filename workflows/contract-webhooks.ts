// The webhook part of the Temporal contract (see contract.ts for the rules): names, ids and payloads shared by the
// dispatcher, the delivery routes, the worker and workflows/webhooks.ts. Types and constants only.
export const WebhookWorkflowType = {
  deliver: 'deliverWebhookWorkflow',
} as const

/** One delivery workflow per message: the id names the endpoint, the event type and the event, so the Temporal UI
 *  reads as what it is, and a second start for the same message (a dispatcher retry, another worker) is refused.
 *  A redelivery is run `n` of the same message: a new id, the same webhook-id on the wire. */
export const webhookWorkflowIds = {
  delivery: (m: { endpointId: string; eventType: string; eventId: string }) => `webhook/${m.endpointId}/${m.eventType}/${m.eventId}`,
  redelivery: (m: { endpointId: string; eventType: string; eventId: string }, n: number) =>
    `webhook/${m.endpointId}/${m.eventType}/${m.eventId}/redelivery-${n}`,
} as const

export const WebhookErrorType = {
  /** The message row is gone (its tenant or endpoint was deleted): nothing left to deliver. */
  messageGone: 'WebhookMessageGone',
} as const

export interface DeliverWebhookInput {
  tenantId: string
  messageId: string
  /** Delay before each attempt, from the previous one (WEBHOOK_RETRY_SCHEDULE at dispatch time). */
  scheduleMs: number[]
  /** The longest Retry-After honoured. */
  retryAfterMaxMs: number
}

export interface AttemptInput {
  tenantId: string
  messageId: string
  attempt: number
  /** No attempt follows this one: a failure marks the message failed. */
  last: boolean
  /** The pacing slot was reserved by the call that answered `paced`: reserve nothing, send once the gate lets it. */
  slotReserved: boolean
}

/** What one attempt came to. Transport failures are outcomes, not activity errors: the workflow's schedule, not
 *  the activity retry policy, decides when the next attempt goes. */
export type AttemptOutcome =
  | { result: 'delivered'; status: number }
  | { result: 'failed'; retryAfterMs: number | null }
  /** The endpoint is rate-limited and its next slot is this far away; nothing was sent. */
  | { result: 'paced'; waitMs: number }
  /** Nothing more to do: 410 Gone, the endpoint disabled or deleted, or the message gone. */
  | { result: 'stopped'; reason: 'gone' | 'failing' | 'endpoint_disabled' | 'message_gone' }

export interface DeliverWebhookResult {
  status: 'succeeded' | 'failed'
  attempts: number
}
