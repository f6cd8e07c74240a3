// Moves committed outbox events into delivery workflows. It runs in the worker process: LISTEN rcp_events wakes it
// at every commit, and a poll catches what a lost notification (a reconnect) missed, so nothing waits longer than
// the poll interval. Each pass claims a batch of undispatched events (oldest first, skip-locked: two workers split
// the work), writes one message per subscribed enabled endpoint and stamps the events dispatched, in ONE
// transaction: an event fans out exactly once whatever crashes. Workflows are started after the commit; a message
// whose start was lost is started by a later pass (its run id is fixed, so a start never sends twice).
import type { Client } from '@temporalio/client'
import { claimUndispatchedEvents, markEventsDispatched, type EventRow } from '../api/events/queries'
import type { Config } from '../api/platform/config'
import type { Sql } from '../api/platform/db'
import type { Logger } from '../api/platform/log'
import { claimUnstartedMessages, insertMessages, type MessageRow } from '../api/webhook-deliveries/queries'
import { startDeliveries } from '../api/webhook-deliveries/start'
import { endpointsForEvent } from '../api/webhook-endpoints/service'

type DispatchConfig = Pick<Config, 'TEMPORAL_TASK_QUEUE_PREFIX' | 'WEBHOOK_RETRY_SCHEDULE' | 'WEBHOOK_RETRY_AFTER_MAX_SECONDS' | 'WEBHOOK_DISPATCH_POLL_MS' | 'WEBHOOK_DISPATCH_BATCH'>

/** A message committed this long ago without a started run lost its start (the process died after commit). */
export const UNSTARTED_GRACE_SECONDS = 5

export interface WebhookDispatcher {
  stop(): Promise<void>
}

/** One fan-out pass in one transaction: answers the messages it created (to start) and how many events it took. */
async function fanOut(sql: Sql, batch: number): Promise<{ events: number; messages: MessageRow[] }> {
  return sql.begin(async (tx) => {
    const events = await claimUndispatchedEvents(tx, batch)
    const subscribers = new Map<string, Promise<{ id: string }[]>>()
    const rows = []
    for (const e of events) {
      const key = `${e.tenant_id}/${e.type}`
      if (!subscribers.has(key)) subscribers.set(key, endpointsForEvent(tx, e.tenant_id, e.type))
      for (const endpoint of await subscribers.get(key)!) rows.push({ tenantId: e.tenant_id, endpointId: endpoint.id, eventId: e.id, eventType: e.type })
    }
    const messages = await insertMessages(tx, rows)
    await markEventsDispatched(tx, events.map((e: EventRow) => e.id))
    return { events: events.length, messages }
  })
}

export async function startWebhookDispatcher(deps: { sql: Sql; client: Client; config: DispatchConfig; log: Logger }): Promise<WebhookDispatcher> {
  const { sql, client, config, log } = deps
  let stopping = false
  let running: Promise<void> | undefined
  let again = false

  const pass = async () => {
    for (;;) {
      const { events, messages } = await fanOut(sql, config.WEBHOOK_DISPATCH_BATCH)
      if (messages.length > 0) await startDeliveries(client, sql, config, messages)
      if (events < config.WEBHOOK_DISPATCH_BATCH || stopping) break
    }
    const lost = await sql.begin((tx) => claimUnstartedMessages(tx, UNSTARTED_GRACE_SECONDS, config.WEBHOOK_DISPATCH_BATCH)
      .then((rows) => startDeliveries(client, tx, config, rows).then(() => rows.length)))
    if (lost > 0) log.warn('started delivery workflows whose start was lost', { messages: lost })
  }
  // One pass at a time; a wake during a pass runs one more after it, so no commit is left waiting for the poll.
  const wake = () => {
    if (stopping) return
    if (running) {
      again = true
      return
    }
    running = pass().catch((err) => log.error('webhook dispatch pass failed; the next wake retries', { err })).finally(() => {
      running = undefined
      if (again) {
        again = false
        wake()
      }
    })
  }

  const listener = await sql.listen('rcp_events', wake, wake)
  const timer = setInterval(wake, config.WEBHOOK_DISPATCH_POLL_MS)
  log.info('webhook dispatcher started', { pollMs: config.WEBHOOK_DISPATCH_POLL_MS })
  return {
    async stop() {
      stopping = true
      clearInterval(timer)
      await listener.unlisten().catch(() => {})
      await running
    },
  }
}
