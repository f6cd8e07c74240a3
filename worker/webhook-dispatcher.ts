// Moves committed outbox events into delivery workflows. It runs in the worker process: LISTEN rcp_events wakes it
// at every commit, and a poll catches what a lost notification (a reconnect) missed, so nothing waits longer than
// the poll interval. What a pass does is the webhook-deliveries domain's (api/webhook-deliveries/fan-out.ts): the
// events fan out to messages in one transaction, exactly once whatever crashes; workflows are started after the
// commit, and a message whose start was lost is started by a later pass (its run id is fixed, so a start never
// sends twice). This file is the loop: when a pass runs, one at a time.
import type { Client } from '@temporalio/client'
import type { Config } from '../api/platform/config'
import type { Sql } from '../api/platform/db'
import type { Logger } from '../api/platform/log'
import { fanOutEvents, startLostDeliveries } from '../api/webhook-deliveries/fan-out'
import { startDeliveries } from '../api/webhook-deliveries/start'

type DispatchConfig = Pick<
  Config,
  'TEMPORAL_TASK_QUEUE_PREFIX' | 'WEBHOOK_RETRY_SCHEDULE' | 'WEBHOOK_RETRY_AFTER_MAX_SECONDS' | 'WEBHOOK_DISPATCH_POLL_MS' | 'WEBHOOK_DISPATCH_BATCH'
>

/** A message committed this long ago without a started run lost its start (the process died after commit). */
export const UNSTARTED_GRACE_SECONDS = 5

export interface WebhookDispatcher {
  stop(): Promise<void>
}

export async function startWebhookDispatcher(deps: { sql: Sql; client: Client; config: DispatchConfig; log: Logger }): Promise<WebhookDispatcher> {
  const { sql, client, config, log } = deps
  let stopping = false
  let running: Promise<void> | undefined
  let again = false

  const pass = async () => {
    for (;;) {
      const { events, messages } = await fanOutEvents(sql, config.WEBHOOK_DISPATCH_BATCH)
      if (messages.length > 0) await startDeliveries(client, sql, config, messages)
      if (events < config.WEBHOOK_DISPATCH_BATCH || stopping) break
    }
    const lost = await startLostDeliveries(client, sql, config, UNSTARTED_GRACE_SECONDS, config.WEBHOOK_DISPATCH_BATCH)
    if (lost > 0) log.warn('started delivery workflows whose start was lost', { messages: lost })
  }
  // One pass at a time; a wake during a pass runs one more after it, so no commit is left waiting for the poll.
  const wake = () => {
    if (stopping) return
    if (running) {
      again = true
      return
    }
    running = pass()
      .catch((err) => log.error('webhook dispatch pass failed; the next wake retries', { err }))
      .finally(() => {
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
