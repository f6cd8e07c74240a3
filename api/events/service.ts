// The one way anything in the platform announces that work finished. The row is written in the caller's
// transaction: an event exists exactly when the change it reports committed (the outbox pattern). Delivery to
// webhook endpoints is the dispatcher's job, never the producer's.
import type { Db } from '../platform/db'
import { eventCatalogue, type EventData, type EventType } from './catalogue'
import { insertEvent } from './queries'

/** Writes the event in `tx`. `data` is checked against the catalogue's schema for `type`, so what a receiver is
 *  promised in the OpenAPI `webhooks` section is what it gets; a producer that drifts fails its own tests. */
export async function publishEvent<T extends EventType>(tx: Db, tenantId: string, type: T, data: EventData<T>) {
  const parsed = eventCatalogue[type].data.parse(data)
  return insertEvent(tx, { tenantId, type, data: parsed })
}
