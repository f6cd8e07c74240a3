import type { Config } from '../platform/config'
import type { Sql } from '../platform/db'
import { deriveKeys, type ServiceDeps } from '../platform/deps'
import type { Logger } from '../platform/log'
import { TemporalClient } from '../platform/temporal'
import { CredentialCache } from '../credentials/cache'
import { CredentialFeed } from '../credentials/feed'
import { LastUsedRecorder } from '../credentials/last-used'
import type { PatEntry } from '../credentials/service'
import { MailDispatcher } from '../mail/service'
import { SignInThrottle } from '../identity/sign-in-throttle'
import { oldestUnsealedAgeSeconds } from '../audit/queries'
import { AuditSealer } from '../audit/sealer'
import { createApiMetrics, type ApiMetrics } from './metrics'
import { SharedBudgets } from '../rate-budgets/service'
import { DatabaseCircuit } from './database-circuit'
import { RateLimiter } from './rate-limit'

/** How long requests are refused on arrival after one found the database unavailable. */
const DATABASE_SHED_MS = 500

/** Everything a route or hook needs, built once per process and passed down explicitly; services receive it as
 *  the ServiceDeps slice they declare. */
export interface AppDeps extends ServiceDeps {
  lastUsed: LastUsedRecorder
  /** Numbers and hashes committed audit entries in batches; start() and stop() with the process. */
  auditSealer: AuditSealer
  /** Resolved PATs; fence() after committing anything that narrows a token. */
  pats: CredentialCache<PatEntry>
  /** Keeps `pats` fresh; start() and stop() with the process. */
  credentialFeed: CredentialFeed
  limiter: RateLimiter
  /** The signed-in budgets every replica shares (RATE_BUDGETS_SHARED); null keeps them per replica. */
  sharedBudgets: SharedBudgets | null
  mail: MailDispatcher
  signInThrottle: SignInThrottle
  /** The process's Prometheus metrics (served by api/main.ts on its own listener). */
  metrics: ApiMetrics
  /** Tripped by a request that found the database unavailable; requests are refused on arrival while it is open. */
  databaseCircuit: DatabaseCircuit
  /** Dependency probes for /readyz; each resolves true when the dependency answers. */
  probes: Record<string, () => Promise<boolean>>
}

export function createDeps(config: Config, sql: Sql, log: Logger, probes: AppDeps['probes'] = {}): AppDeps {
  const temporal = new TemporalClient(config)
  const pats = new CredentialCache<PatEntry>({
    fenceMs: config.CREDENTIAL_CACHE_FENCE_MS, ttlMs: config.CREDENTIAL_CACHE_TTL_SECONDS * 1000, maxEntries: config.CREDENTIAL_CACHE_MAX_ENTRIES,
  })
  const limiter = new RateLimiter()
  const metrics = createApiMetrics()
  metrics.watchCache(pats)
  metrics.watchAuditSealing(() => oldestUnsealedAgeSeconds(sql))
  return {
    pats,
    metrics,
    credentialFeed: new CredentialFeed(config.DATABASE_URL, pats, log.child({ component: 'credential-feed' })),
    temporal,
    config,
    sql,
    log,
    lastUsed: new LastUsedRecorder(sql, log, config.PAT_LAST_USED_FLUSH_SECONDS * 1000),
    auditSealer: new AuditSealer(sql, log.child({ component: 'audit-sealer' }), config.AUDIT_SEAL_INTERVAL_MS, config.AUDIT_SEAL_BATCH),
    limiter,
    sharedBudgets: config.RATE_BUDGETS_SHARED ? new SharedBudgets(sql, log.child({ component: 'rate-budgets' }), (k, id, n) => limiter.admit(k, id, n)) : null,
    databaseCircuit: new DatabaseCircuit(DATABASE_SHED_MS),
    mail: new MailDispatcher(temporal, config, log.child({ component: 'mail' })),
    signInThrottle: new SignInThrottle(config),
    keys: deriveKeys(config.SECRET_KEY),
    probes,
  }
}
