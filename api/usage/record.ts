// Writing usage events: called inside the transaction of the work being measured, so the work and its event commit
// or roll back together (a key is never claimed ahead of the write, openmeter#5118).
import { sha256 } from '../platform/crypto'
import type { Db } from '../platform/db'
import { METERS, type Meter } from './meters'
import { insertUsageEvent, insertUsageEvents, type UsageEventInput } from './queries'

export interface UsageEvent {
  tenantId: string
  /** The project the measured work belonged to; null when it named none. */
  projectId: string | null
  meter: Meter
  /** Whole units of the meter's unit. */
  quantity: bigint | number
  /** What a unique-count meter counts distinct values of; null for the other aggregations. */
  subject?: string | null
  occurredAt?: Date
  /** Unique per tenant: the same key is the same event. */
  idempotencyKey: string
}

/** The same key with another payload: a different event claims an event's identity. */
export class UsageKeyConflict extends Error {
  override name = 'UsageKeyConflict'
  constructor(readonly idempotencyKey: string) {
    super(`Usage event key "${idempotencyKey}" was recorded with another payload`)
  }
}

function toInput(e: UsageEvent): UsageEventInput {
  if (!Object.hasOwn(METERS, e.meter)) throw new Error(`Unknown meter ${e.meter}`)
  const quantity = BigInt(e.quantity)
  if (quantity < 0n) throw new Error(`A usage quantity is never negative (${e.meter}: ${quantity})`)
  const subject = e.subject ?? null
  // What the event says, not when it was seen: a replay observed later is still the same event.
  const payloadHash = sha256(JSON.stringify([e.meter, quantity.toString(), e.projectId, subject]))
  return {
    tenantId: e.tenantId,
    projectId: e.projectId,
    meter: e.meter,
    quantity,
    subject,
    occurredAt: e.occurredAt ?? new Date(),
    idempotencyKey: e.idempotencyKey,
    payloadHash,
  }
}

/** Records one event: 'recorded', or 'replayed' when this key already holds the same payload (counted once). Throws
 *  UsageKeyConflict when the key holds another payload, which rolls back the caller's transaction. */
export async function recordUsage(tx: Db, event: UsageEvent): Promise<'recorded' | 'replayed'> {
  const input = toInput(event)
  const out = await insertUsageEvent(tx, input)
  if (out.inserted) return 'recorded'
  if (!out.payloadHash.equals(input.payloadHash)) throw new UsageKeyConflict(input.idempotencyKey)
  return 'replayed'
}

/** Many events in one statement; keys already taken are skipped (their writers hold them). Answers how many were new. */
export const recordUsageBatch = (db: Db, events: UsageEvent[]): Promise<number> => insertUsageEvents(db, events.map(toInput))
