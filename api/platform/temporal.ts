import { Client, Connection } from '@temporalio/client'
import type { Config } from './config'

/** The API's one connection to Temporal, shared by every domain that starts workflows (mail, storage). It connects
 *  on first use, so a process that never starts a workflow never connects, and a failed attempt is forgotten, so a
 *  process started while Temporal was down recovers once it is back (a lazy Connection would keep the failure). */
export class TemporalClient {
  private pending: Promise<{ connection: Connection; client: Client }> | undefined

  constructor(private config: Pick<Config, 'TEMPORAL_ADDRESS' | 'TEMPORAL_NAMESPACE'>) {}

  async get(): Promise<Client> {
    this.pending ??= Connection.connect({ address: this.config.TEMPORAL_ADDRESS }).then(
      (connection) => ({ connection, client: new Client({ connection, namespace: this.config.TEMPORAL_NAMESPACE }) }),
      (err) => {
        this.pending = undefined
        throw err
      },
    )
    return (await this.pending).client
  }

  async close(): Promise<void> {
    const pending = this.pending
    this.pending = undefined
    if (pending) await pending.then(({ connection }) => connection.close(), () => {})
  }
}
