// From the outbox to messages: committed events become one message per subscribed enabled endpoint, and messages
// whose workflow start was lost get it again. The worker's dispatcher loop (worker/webhook-dispatcher.ts) decides
// when these run; what a pass does is this domain's, beside the redeliveries and test events of service.ts.
import type { Client } from '@temporalio/client'
import { claimUndispatchedEvents, markEventsDispatched } from '../events/queries'
import type { Config } from '../platform/config'
import type { Sql } from '../platform/db'
import { endpointsForEvent } from '../webhook-endpoints/service'
import { claimUnstartedMessages, insertMessages, type MessageRow } from './queries'
import { startDeliveries } from './start'

/** One pass in ONE transaction: claims a batch of undispatched events (oldest first, skip-locked, so two workers
 *  split the work), writes their messages and stamps the events dispatched, so an event fans out exactly once
 *  whatever crashes. Answers the messages it created (their runs are started after the commit) and how many events
 *  it took. */
export async function fanOutEvents(sql: Sql, batch: number): Promise<{ events: number; messages: MessageRow[] }> {
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
    await markEventsDispatched(
      tx,
      events.map((e) => e.id),
    )
    return { events: events.length, messages }
  })
}

type StartConfig = Pick<Config, 'TEMPORAL_TASK_QUEUE_PREFIX' | 'WEBHOOK_RETRY_SCHEDULE' | 'WEBHOOK_RETRY_AFTER_MAX_SECONDS'>

/** Starts the runs of up to `batch` messages committed at least `graceSeconds` ago without one (the process died
 *  between the commit and the start). A run's id is fixed, so a start that did happen is not sent twice. Answers how
 *  many it claimed. */
export async function startLostDeliveries(client: Client, sql: Sql, config: StartConfig, graceSeconds: number, batch: number): Promise<number> {
  return sql.begin((tx) => claimUnstartedMessages(tx, graceSeconds, batch).then((rows) => startDeliveries(client, tx, config, rows).then(() => rows.length)))
}
