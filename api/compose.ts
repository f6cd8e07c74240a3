// The one place the processes' dependencies are built. The API (api/main.ts) calls composeApi; the worker
// (worker/run.ts) calls composeServices with the client of its own Temporal connection; tests, benchmarks and scripts
// call the same two. Each process holds one Temporal client, made here.
import type { Client } from '@temporalio/client'
import { oldestUnsealedAgeSeconds } from './audit/queries'
import { AuditSealer } from './audit/sealer'
import { CredentialCache } from './credentials/cache'
import { CredentialFeed } from './credentials/feed'
import { LastUsedRecorder } from './credentials/last-used'
import type { PatEntry } from './credentials/service'
import { dependencyProbes } from './health/probes'
import { DatabaseCircuit } from './http/database-circuit'
import type { HttpDeps } from './http/deps'
import { createApiMetrics } from './http/metrics'
import { RateLimiter } from './http/rate-limit'
import { SignInThrottle } from './identity/sign-in-throttle'
import { setPasswordHashCost } from './identity/passwords'
import { MailDispatcher } from './mail/service'
import type { Config } from './platform/config'
import type { Sql } from './platform/db'
import { deriveKeys, type ServiceDeps } from './platform/deps'
import type { Logger } from './platform/log'
import { TemporalClient } from './platform/temporal'
import { SharedBudgets } from './rate-budgets/service'
import { RequestTally } from './rate-budgets/request-tally'
import { priceBookOf } from './billing/price-book'

/** How long requests are refused on arrival after one found the database unavailable. */
const DATABASE_SHED_MS = 500

/** Everything a route or hook needs, built once per process and passed down explicitly; services receive it as
 *  the ServiceDeps slice they declare, the conventions plugin as HttpDeps. */
export interface AppDeps extends ServiceDeps, HttpDeps {
  /** Numbers and hashes committed audit entries in batches; start() and stop() with the process. */
  auditSealer: AuditSealer
  /** Resolved PATs; fence() after committing anything that narrows a token. */
  pats: CredentialCache<PatEntry>
  /** Keeps `pats` fresh; start() and stop() with the process. */
  credentialFeed: CredentialFeed
  mail: MailDispatcher
  signInThrottle: SignInThrottle
  /** Dependency probes for /readyz; each resolves true when the dependency answers. */
  probes: Record<string, () => Promise<boolean>>
}

/** What every process's services need. `temporal`: a client the process already holds (the worker's, on the
 *  connection its workers poll with), so it keeps one; without it the client connects on first use. */
export function composeServices(config: Config, sql: Sql, log: Logger, temporal?: Client): ServiceDeps & { mail: MailDispatcher } {
  const client = new TemporalClient(config, temporal)
  priceBookOf(config) // a malformed price book stops the process here, not at the first close
  return { config, sql, log, keys: deriveKeys(config.SECRET_KEY), temporal: client, mail: new MailDispatcher(client, config, log.child({ component: 'mail' })) }
}

/** The API process's dependencies; start() and stop() the ones that say so with the process. */
export function composeApi(config: Config, sql: Sql, log: Logger): AppDeps {
  const services = composeServices(config, sql, log)
  setPasswordHashCost({ memoryCost: config.PASSWORD_HASH_MEMORY_KIB, timeCost: config.PASSWORD_HASH_ITERATIONS })
  const pats = new CredentialCache<PatEntry>({
    fenceMs: config.CREDENTIAL_CACHE_FENCE_MS,
    ttlMs: config.CREDENTIAL_CACHE_TTL_SECONDS * 1000,
    maxEntries: config.CREDENTIAL_CACHE_MAX_ENTRIES,
  })
  const limiter = new RateLimiter()
  const metrics = createApiMetrics()
  metrics.watchCache(pats)
  metrics.watchAuditSealing(() => oldestUnsealedAgeSeconds(sql))
  return {
    ...services,
    pats,
    metrics,
    credentialFeed: new CredentialFeed(config.DATABASE_URL, pats, log.child({ component: 'credential-feed' })),
    lastUsed: new LastUsedRecorder(sql, log, config.PAT_LAST_USED_FLUSH_SECONDS * 1000),
    requestTally: new RequestTally(sql, log.child({ component: 'usage' }), config.USAGE_FLUSH_SECONDS * 1000),
    auditSealer: new AuditSealer(sql, log.child({ component: 'audit-sealer' }), config.AUDIT_SEAL_INTERVAL_MS, config.AUDIT_SEAL_BATCH),
    limiter,
    sharedBudgets: config.RATE_BUDGETS_SHARED ? new SharedBudgets(sql, log.child({ component: 'rate-budgets' }), (k, id, n) => limiter.admit(k, id, n)) : null,
    databaseCircuit: new DatabaseCircuit(DATABASE_SHED_MS),
    signInThrottle: new SignInThrottle(config),
    probes: dependencyProbes(config, services.temporal),
  }
}
