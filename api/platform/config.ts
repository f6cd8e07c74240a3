import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { z } from 'zod'
import { secretKeyList } from './keyring'
import { parseCidr } from './outbound/addresses'

// One schema for every process (API, worker, scripts). Each variable is documented in the table of docs/operations.md "Configuration".
const int = (def: number) => z.coerce.number().int().nonnegative().default(def)
const list = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const
/** "0,5s,5m,2h" → milliseconds; NaN for an item that is not a number with one of those units. */
const durationsMs = (v: string) =>
  list(v).map((d) => {
    const m = /^(\d+)(ms|s|m|h)?$/.exec(d)
    return m ? Number(m[1]) * UNIT_MS[(m[2] ?? 'ms') as keyof typeof UNIT_MS] : NaN
  })

export const ConfigSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  // argon2id's cost for new password hashes: OWASP's minimum (19 MiB, 2 iterations) by default and at least that
  // outside NODE_ENV=test (below); stored hashes keep the cost they were made with.
  PASSWORD_HASH_MEMORY_KIB: z.coerce.number().int().min(8).max(4_194_304).default(19_456),
  PASSWORD_HASH_ITERATIONS: z.coerce.number().int().min(1).max(100).default(2),
  HOST: z.string().default('127.0.0.1'),
  PORT: int(3000),
  // Prometheus scrape listeners, off the public port (docs/operations.md "Metrics"); port 0 picks a free one.
  METRICS: z.stringbool().default(true),
  METRICS_HOST: z.string().default('127.0.0.1'),
  METRICS_PORT: int(9464),
  WORKER_METRICS_PORT: int(9465),
  TEMPORAL_METRICS_PORT: int(9466),
  PUBLIC_URL: z.string().url().optional(),
  DATABASE_URL: z.string().min(1),
  DATABASE_POOL_MAX: int(10),
  // How long a new database connection may take before the request waiting on it is answered 503.
  DATABASE_CONNECT_TIMEOUT_SECONDS: z.coerce.number().int().min(1).default(5),
  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE_PREFIX: z.string().default('rcp'),
  // A directory where the worker keeps its workflow bundles between starts, keyed by a hash of their sources
  // (worker/bundle-cache.ts); unset: every start bundles afresh.
  WORKFLOW_BUNDLE_CACHE_DIR: z.string().min(1).optional(),
  S3_ENDPOINT: z.string().url().default('http://127.0.0.1:9000'),
  S3_ACCESS_KEY: z.string().default('rcpadmin'),
  S3_SECRET_KEY: z.string().default('rcpadmin-secret'),
  // JSON array of extra regions: [{"id","name","endpoint","accessKey","secretKey","available"}]. The local
  // region (id "local") is always S3_ENDPOINT.
  STORAGE_REGIONS: z.string().default('[]'),
  SMTP_URL: z.string().default('smtp://127.0.0.1:1025'),
  MAIL_FROM: z.string().default('Robot Control Plane <no-reply@rcp.localhost>'),
  // The keyring (api/platform/keyring.ts): keys of 32 bytes, base64, comma-separated, the first current. Every
  // other key is derived from them per purpose.
  SECRET_KEY: z
    .string()
    .refine(
      (v) => secretKeyList(v).length > 0 && secretKeyList(v).every((k) => Buffer.from(k, 'base64').length === 32),
      'SECRET_KEY must be one or more keys of 32 bytes, base64-encoded, comma-separated (the first is current)',
    )
    .refine((v) => new Set(secretKeyList(v)).size === secretKeyList(v).length, 'SECRET_KEY lists a key twice'),
  MAX_BODY_BYTES: int(1024 * 1024),
  RATE_LIMIT_PRINCIPAL_PER_MINUTE: int(600),
  RATE_LIMIT_TENANT_PER_MINUTE: int(3000),
  // The user and tenant budgets hold across replicas through Postgres (api/rate-budgets); false: per replica.
  RATE_BUDGETS_SHARED: z.stringbool().default(true),
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: int(120),
  // The device authorization grant (api/device-authorizations): new authorizations per client address (per replica),
  // and user codes entered per signed-in user (across replicas), which bounds guessing.
  RATE_LIMIT_DEVICE_AUTHORIZATIONS_PER_MINUTE: int(10),
  RATE_LIMIT_DEVICE_CODE_ENTRIES_PER_MINUTE: int(10),
  IDEMPOTENCY_TTL_HOURS: int(24),
  // Defaults for tenants whose auth policy does not set them.
  SESSION_ABSOLUTE_HOURS: int(24 * 7),
  SESSION_IDLE_MINUTES: int(24 * 60),
  // "auto": Secure cookies unless PUBLIC_URL is plain http (local development).
  COOKIE_SECURE: z.enum(['auto', 'true', 'false']).default('auto'),
  IDEMPOTENCY_LOCK_SECONDS: int(60),
  HOUSEKEEPING_INTERVAL_MINUTES: int(15),
  PAT_LAST_USED_FLUSH_SECONDS: int(10),
  // API requests are metered in memory and written as usage events once per interval (api/usage/request-tally.ts).
  USAGE_FLUSH_SECONDS: int(60),
  // Per-replica PAT cache (api/credentials/cache.ts): revocations answer after the fence; 0 turns it off.
  CREDENTIAL_CACHE_FENCE_MS: int(500),
  CREDENTIAL_CACHE_TTL_SECONDS: int(5),
  CREDENTIAL_CACHE_MAX_ENTRIES: z.coerce.number().int().min(1).default(10_000),
  // Failed password sign-ins (docs/api.md "Sign-in throttling"): refused with 429 from this many failures in 15 minutes,
  // per account and per client address; the delay before each attempt after the free ones starts at this base.
  SIGNIN_ACCOUNT_LOCK_FAILURES: int(10),
  SIGNIN_IP_LOCK_FAILURES: int(100),
  SIGNIN_DELAY_BASE_MS: int(250),
  // Objects per S3 listing page in storage reconciliation (S3 serves at most 1000).
  STORAGE_RECONCILE_PAGE_SIZE: z.coerce.number().int().min(1).max(1000).default(1000),
  // Passkeys: the relying party id (a registrable domain suffix of every origin) and the comma-separated page
  // origins whose WebAuthn ceremonies are accepted. Set empty, the deployment offers no passkeys: every passkey
  // ceremony answers 400 AUTH_PROVIDER_NOT_CONFIGURED (api/mfa/webauthn.ts relyingParty).
  WEBAUTHN_RP_ID: z.string().default('localhost'),
  WEBAUTHN_ORIGINS: z
    .string()
    .default('http://localhost:3000')
    .transform((v) =>
      v
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.url()).min(1)),
  // Outbound requests to tenant-supplied URLs (api/platform/outbound): off by default, every private, loopback and
  // link-local destination is refused; these let named hosts or ranges through for development and tests.
  OUTBOUND_ALLOW_HOSTS: z.string().default('').transform(list),
  OUTBOUND_ALLOW_PRIVATE_CIDRS: z
    .string()
    .default('')
    .transform(list)
    .refine((cidrs) => cidrs.every((c) => parseCidr(c) !== null), 'comma-separated CIDRs such as 127.0.0.0/8,::1/128'),
  // A PEM bundle trusted for outbound https in addition to the system roots (a test-made CA, a corporate one).
  OUTBOUND_CA_FILE: z.string().min(1).refine(existsSync, 'no such file').optional(),
  // The DNS servers asked for domain-verification TXT records (host or host:port, comma-separated); empty: the
  // system's resolvers. Tests point it at a local responder.
  DOMAIN_VERIFICATION_DNS_SERVERS: z.string().default('').transform(list),
  // Model versions (api/model-versions): how long a presigned upload URL stays valid.
  MODEL_UPLOAD_URL_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(7 * 86_400)
    .default(900),
  // The largest object the API itself streams to storage (PUT …/object-content, the console's upload): it also sets
  // the server's hard limit on any request body, which every other route keeps to MAX_BODY_BYTES while reading.
  MODEL_UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(5 * 2 ** 40)
    .default(5 * 2 ** 30),
  // Webhook endpoints (api/webhook-endpoints): after a secret rotation the previous secret keeps signing beside the
  // new one for this long, so receivers can switch over without rejecting a delivery.
  WEBHOOK_SECRET_OVERLAP_SECONDS: int(86_400),
  // Edge inference packages (api/edge-packages): the Ed25519 signing key (PKCS#8 PEM; unset: derived from
  // SECRET_KEY), earlier public keys still listed for verification (PEM blocks or raw base64, comma-separated),
  // the download URL's lifetime, and the gzip level of the archive.
  PACKAGE_SIGNING_KEY: z.string().includes('PRIVATE KEY').optional(),
  PACKAGE_SIGNING_PREVIOUS_PUBLIC_KEYS: z.string().default(''),
  PACKAGE_DOWNLOAD_URL_SECONDS: z.coerce.number().int().min(60).max(3600).default(900),
  PACKAGE_GZIP_LEVEL: z.coerce.number().int().min(1).max(9).default(6),
  // Webhook delivery (docs/webhooks.md "Delivery"). The dispatcher runs in the worker and moves outbox events into delivery
  // workflows; false leaves that to other workers (the test runner's own worker, whose CA bundle the tests lack).
  WEBHOOK_DISPATCHER: z.stringbool().default(true),
  // The task queues this worker process polls, by name in worker/queues.ts, comma-separated; empty: all of them. Lets
  // a deployment give package builds or webhook deliveries machines of their own (docs/operations.md "Scaling out").
  WORKER_TASK_QUEUES: z.string().default('').transform(list),
  WEBHOOK_DISPATCH_POLL_MS: z.coerce.number().int().min(10).default(1000),
  WEBHOOK_DISPATCH_BATCH: z.coerce.number().int().min(1).max(1000).default(200),
  // When each attempt is made, counted from the previous one: the first is the first attempt's delay.
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default('0,5s,5m,30m,2h,5h,10h,10h')
    .transform(durationsMs)
    .refine((ds) => ds.length > 0 && ds.every(Number.isFinite), 'comma-separated durations such as 0,5s,5m,2h'),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
  // The longest Retry-After (429, 503) honoured; a longer one waits this long.
  WEBHOOK_RETRY_AFTER_MAX_SECONDS: int(3600),
  // An endpoint whose every attempt has failed for this long is disabled (reason "failing").
  WEBHOOK_DISABLE_AFTER_SECONDS: int(5 * 24 * 3600),
  // Audit trail (docs/security.md "Audit trail"): the longest window one listing may ask for, the most entries one export
  // may hold, and how long entries are kept (they outlive their tenant until then). The events outbox and webhook
  // messages with their attempts are purged by the housekeeping workflow after their own periods.
  AUDIT_LOG_MAX_WINDOW_DAYS: z.coerce.number().int().min(1).max(3660).default(31),
  AUDIT_EXPORT_MAX_ENTRIES: z.coerce.number().int().min(1).default(5_000_000),
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).default(400),
  /** Days between an offboarding request and the end of its window (issue 37); never under a day. */
  OFFBOARDING_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  EVENTS_RETENTION_DAYS: z.coerce.number().int().min(1).default(30),
  WEBHOOK_MESSAGES_RETENTION_DAYS: z.coerce.number().int().min(1).default(30),
  RETENTION_PURGE_BATCH: z.coerce.number().int().min(1).max(100_000).default(5000),
  // The API's audit sealer (api/audit/sealer.ts): how often it numbers and hashes the entries committed since, and
  // the most it takes in one transaction. Readers of the trail seal what they read first, whatever this is.
  AUDIT_SEAL_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(200),
  AUDIT_SEAL_BATCH: z.coerce.number().int().min(1).max(100_000).default(5000),
  // Tenant deletion (docs/api.md "Deletion jobs"): how long the backups an operator keeps live (the receipt states when
  // the last one holding the tenant expires), rows per DELETE statement and keys per S3 multi-object delete, and how
  // long the job waits for the final tenant.deleted event to be delivered before it disables the endpoints anyway.
  BACKUP_RETENTION_DAYS: z.coerce.number().int().min(1).max(3660).default(35),
  TENANT_DELETION_BATCH_ROWS: z.coerce.number().int().min(1).max(50_000).default(1000),
  TENANT_DELETION_BATCH_OBJECTS: z.coerce.number().int().min(1).max(1000).default(1000),
  // How long one activity call deletes before it hands back to the workflow (one history event per call).
  TENANT_DELETION_CALL_MS: z.coerce.number().int().min(100).max(300_000).default(20_000),
  TENANT_DELETION_FINAL_EVENT_WAIT_SECONDS: z.coerce.number().int().min(0).max(86_400).default(600),
  // Billing (docs/api.md "Billing"): the price book file (JSON; the shipped api/billing/price-book.json when unset), how
  // long a past_due subscription has to pay before it becomes unpaid, and how often the worker looks for ended periods
  // to close and grace periods run out (0: no schedule).
  BILLING_PRICE_BOOK_FILE: z
    .string()
    .min(1)
    .default(fileURLToPath(new URL('../billing/price-book.json', import.meta.url)))
    .refine(existsSync, 'no such file'),
  BILLING_GRACE_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .default(7 * 24),
  BILLING_SWEEP_INTERVAL_MINUTES: int(5),
  // The shared secret of the deployment's payment-provider adapter: a payment event is accepted only with it in
  // X-Billing-Provider-Key (a tenant's own credential is not enough: its billing admin could mark itself paid).
  // Unset: no payment event is accepted.
  BILLING_PROVIDER_KEY: z.string().min(32).optional(),
})

export type Config = z.infer<typeof ConfigSchema>

/** A password hash cheaper than the default (OWASP's minimum) is for test deployments only, where every account is
 *  made and thrown away by the suite (docs/testing.md "What the suite costs"). */
function weakerPasswordHashing(c: Config): string | undefined {
  if (c.NODE_ENV === 'test') return undefined
  const memory = ConfigSchema.shape.PASSWORD_HASH_MEMORY_KIB.parse(undefined)
  const iterations = ConfigSchema.shape.PASSWORD_HASH_ITERATIONS.parse(undefined)
  if (c.PASSWORD_HASH_MEMORY_KIB >= memory && c.PASSWORD_HASH_ITERATIONS >= iterations) return undefined
  return `PASSWORD_HASH_MEMORY_KIB and PASSWORD_HASH_ITERATIONS may go below ${memory} and ${iterations} (OWASP's minimum for argon2id) only with NODE_ENV=test`
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = ConfigSchema.safeParse(env)
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`)
    throw new Error(`invalid configuration:\n${lines.join('\n')}`)
  }
  const weak = weakerPasswordHashing(parsed.data)
  if (weak) throw new Error(`invalid configuration:\n  ${weak}`)
  return parsed.data
}

/** Where mailed links and sign-in URLs point: PUBLIC_URL, or the API's own address in development. */
export const publicBase = (config: Pick<Config, 'PUBLIC_URL' | 'HOST' | 'PORT'>) =>
  (config.PUBLIC_URL ?? `http://${config.HOST}:${config.PORT}`).replace(/\/$/, '')
