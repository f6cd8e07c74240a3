import type { Config } from './config'
import { deriveKey, secretsAtRestKey } from './crypto'
import type { Sql } from './db'
import type { Logger } from './log'
import type { TemporalClient } from './temporal'

/** Keys derived from SECRET_KEY, one per purpose (deriveKey). */
export interface DerivedKeys {
  page: Buffer
  csrf: Buffer
  idempotency: Buffer
  secrets: Buffer
}

/** The keys of both processes: the API and the worker derive the same ones, so either opens what the other sealed. */
export const deriveKeys = (secretKey: string): DerivedKeys => ({
  page: deriveKey(secretKey, 'page-token'),
  csrf: deriveKey(secretKey, 'csrf'),
  idempotency: deriveKey(secretKey, 'idempotency-response'),
  secrets: secretsAtRestKey(secretKey),
})

/** Starts the send of committed mail outbox rows (api/mail's MailDispatcher). */
export interface MailSender {
  dispatch(mails: { id: string; tenantId: string | null }[]): Promise<void>
}

/** What domain services need from the process, built once and passed down as it is (AppDeps and ActivityDeps
 *  extend it; the worker builds its own in worker/deps.ts).
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
