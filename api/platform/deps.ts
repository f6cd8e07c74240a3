import type { Config } from './config'
import type { Sql } from './db'
import type { DerivedKeys } from './keyring'
import type { Logger } from './log'
import type { TemporalClient } from './temporal'

export { deriveKeys, type DerivedKeys } from './keyring'

/** Starts the send of committed mail outbox rows (api/mail's MailDispatcher). `ids` name the request whose mail it
 *  is on the log line of a failed start (api/identity/context.ts logIds). */
export interface MailSender {
  dispatch(mails: { id: string; tenantId: string | null }[], ids?: Readonly<Record<string, string>>): Promise<void>
}

/** What domain services need from the process, built once and passed down as it is (AppDeps and ActivityDeps
 *  extend it; api/compose.ts builds it for the API and the worker alike).
 *  Every service entry point takes it first, typed as the slice it uses (`Pick<ServiceDeps, 'sql' | 'config'>`);
 *  a helper that must run inside its caller's transaction takes that transaction (`tx: Db`) instead. */
export interface ServiceDeps {
  config: Config
  sql: Sql
  log: Logger
  keys: DerivedKeys
  /** The process's one Temporal client; close() on shutdown. */
  temporal: TemporalClient
  mail: MailSender
}
