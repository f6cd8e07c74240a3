import { Client, Connection } from '@temporalio/client'
import type { Config } from '../platform/config'

// The API reaches Temporal only to start storage workflows. One lazy connection per configuration, made on
// first use, so processes and test servers that never provision never connect.
const clients = new WeakMap<Config, Client>()

export function temporalClient(config: Config): Client {
  let client = clients.get(config)
  if (!client) {
    client = new Client({ connection: Connection.lazy({ address: config.TEMPORAL_ADDRESS }), namespace: config.TEMPORAL_NAMESPACE })
    clients.set(config, client)
  }
  return client
}
