// The platform under mixed load (issue 22, "Mixed load"; issue 19's console line): `bun bench/mixed-load.ts
// [--minutes 5] [--solo-seconds 30] [--pat-rate 200] [--sign-in-loops 2×cores] [--member-loops 4] [--build-loops 2]
// [--endpoints 4] [--webhook-window 16] [--workloads sign-ins,pat,...] [--profile]` plus the harness's flags (--quick:
// a 1-minute mixed phase, 10 s solos).
// Results in bench/results/mixed-load.json and, with the RSS samples and every error, mixed-load-details.json.
//
// The real platform, as ./scripts/up runs it: Postgres, a Temporal dev server, MinIO and a mail catcher of the
// bench's own; the API (api/main.ts's process, started as bench/api-entry.ts) and the worker (worker/main.ts) each
// its own process with production settings: the access log on at info, written to a file
// (bench/results/mixed-load-api.log, -worker.log), shared rate budgets on, default pools and caches; the API's
// session at the CPU weight ./scripts/up gives it (API_AUTOGROUP_NICE, in scripts/supervisor.ts). Only the rate
// budgets are raised out of the way (as the harness does for every benchmark), and the outbound guard lets
// deliveries reach the bench's HTTPS receivers (a CA the bench makes).
//
// Workloads (bench/mixed-workloads.ts):
//  1. password sign-ins in closed loops, two per core: argon2id busy on every core, and each sign-in waiting behind
//     few others (a loop's latency is the loops over the rate: more loops only queue);
//  2. GET /v1/tokens/self with a PAT at a fixed rate, open loop, from a process of its own (bench/open-loop.ts):
//     latency is counted from each request's scheduled time (target p99 < 20 ms while sign-in is saturated);
//  3. member pages of a tenant of 100,000 members (filtered, with totalCount, and the page after);
//  4. edge package builds requested through the API from a small ready model version, each polled to ready;
//  5. webhook fan-out: API keys created through the API, each an audit.entry event delivered to every endpoint;
//  6. the console's pages in Chromium, each in a fresh context, until interactive (target < 1 s each).
// Each is first measured alone for --solo-seconds (the baselines), then all together for --minutes (the rows, each
// read against its own solo figure), then alone again (a baseline's figure is the mean of before and after, so a
// neighbour on the shared machine weighs on both). Required: zero errors (every 5xx, timeout, socket error and
// unexpected status counted per workload), and the API's and the worker's resident set (sampled every 5 s) growing
// less than 10% from the mixed phase's first minute to its last.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { bundle } from '../scripts/build-console'
import { LOOPBACK_CIDRS, freePort, newSecretKey, spawnChild, startMailCatcher, startMinio, startTemporal, waitUntil } from '../scripts/platform'
import { launchChromium } from '../test/support/chromium'
import { makeCertificates, Receiver } from '../test/support/webhook-receiver'
import { PAGES } from './console-pages'
import { cpuBetween, cpuSnapshot } from './cpu-use'
import { benchmark, RESULTS, ROOT, type BenchContext, type Measure, type Sample } from './harness'
import { consolePages, memberPages, packageBuilds, patReads, signIns, webhookFanOut, type Outcome, type Workload } from './mixed-workloads'
import { must, ownerIn, seedMembers, unique } from './rows'
import { quantile } from './one-at-a-time'

const say = (msg: string) => console.error(`[bench] ${msg}`)
const PASSWORD = 'correct horse battery staple'
const RSS_EVERY_MS = 5000
const PAT_P99_MS = 20
const RSS_GROWTH = 0.1
const PAGE_MS = 1000
const WORKLOAD_KEYS = ['sign-ins', 'pat', 'members', 'builds', 'webhooks', 'console'] as const
type WorkloadKey = (typeof WORKLOAD_KEYS)[number]

/** Resident set of a process, MB. */
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
const errorsOf = (o: Outcome) => Object.values(o.errors).reduce((a, b) => a + b, 0)
const describeErrors = (o: Outcome) =>
  `${Object.entries(o.errors)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ')}; first: ${o.example}`

function sampleOf(o: Outcome): Sample {
  return {
    rate: o.rate,
    p50Ms: o.p50Ms,
    p99Ms: o.p99Ms,
    warning: errorsOf(o) ? `${errorsOf(o)} errors: ${describeErrors(o)}` : undefined,
    note: [`${o.rate.toFixed(o.rate < 10 ? 2 : 1)} ${o.unit}`, o.detail, errorsOf(o) ? undefined : '0 errors'].filter(Boolean).join('; '),
  }
}

/** Lines of a JSON-lines log: requests answered ≥ 500 (the access log) and entries at level error. */
function logFindings(file: string) {
  let fiveXx = 0
  let errors = 0
  let lines = 0
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue
    lines++
    try {
      const e = JSON.parse(line)
      if (e.msg === 'request' && Number(e.status) >= 500) fiveXx++
      if (e.level === 'error' || e.level === 50) errors++
    } catch {
      /* a partial last line */
    }
  }
  return { lines, fiveXx, errors }
}

await benchmark(
  'mixed-load',
  {
    minutes: { type: 'string' },
    'solo-seconds': { type: 'string' },
    'pat-rate': { type: 'string' },
    'sign-in-loops': { type: 'string' },
    'member-loops': { type: 'string' },
    'build-loops': { type: 'string' },
    endpoints: { type: 'string' },
    'webhook-window': { type: 'string' },
    profile: { type: 'boolean', default: false },
    workloads: { type: 'string' },
  },
  async (h) => {
    const quick = Boolean(h.flags.quick)
    const minutes = Number(h.flags.minutes ?? (quick ? 1 : 5))
    const soloSeconds = Number(h.flags['solo-seconds'] ?? (quick ? 10 : 30))
    const patRate = Number(h.flags['pat-rate'] ?? 200)
    const signInLoops = Number(h.flags['sign-in-loops'] ?? 2 * cpus().length)
    const memberLoops = Number(h.flags['member-loops'] ?? 4)
    const buildLoops = Number(h.flags['build-loops'] ?? 2)
    const endpoints = Number(h.flags.endpoints ?? 4)
    const webhookWindow = Number(h.flags['webhook-window'] ?? 16)
    // --workloads sign-ins,pat: a subset, to tell which neighbour a latency waits behind (every one by default).
    const selected = (h.flags.workloads ? String(h.flags.workloads).split(',') : [...WORKLOAD_KEYS]) as WorkloadKey[]
    for (const k of selected) if (!WORKLOAD_KEYS.includes(k)) throw new Error(`--workloads: no workload ${k} (${WORKLOAD_KEYS.join(', ')})`)
    say(`load average at start: ${loadAverage()} (${cpus().length} cores)`)

    // The servers of the platform.
    await bundle() // the API serves the console from the current sources
    const pg = await h.postgres()
    const temporal = await startTemporal({
      dbFile: join(h.scratch, 'temporal', 'temporal.db'),
      port: await freePort(),
      uiPort: await freePort(),
      httpPort: await freePort(),
      logFile: join(RESULTS, 'mixed-load-temporal.log'),
      ephemeral: true,
    })
    h.own(temporal)
    const minio = await startMinio({
      dataDir: join(h.scratch, 'minio'),
      port: await freePort(),
      consolePort: await freePort(),
      logFile: join(RESULTS, 'mixed-load-minio.log'),
    })
    h.own(minio)
    const mail = await startMailCatcher({ smtpPort: await freePort(), httpPort: await freePort() })
    h.own(mail)
    const certDir = join(h.scratch, 'certs')
    mkdirSync(certDir)
    const certs = makeCertificates(certDir)
    const platform = {
      DATABASE_URL: pg.url,
      SECRET_KEY: newSecretKey(),
      LOG_LEVEL: 'info',
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_NAMESPACE: temporal.namespace,
      TEMPORAL_TASK_QUEUE_PREFIX: `rcp-mixed-${unique()}`,
      S3_ENDPOINT: minio.endpoint,
      S3_ACCESS_KEY: minio.accessKey,
      S3_SECRET_KEY: minio.secretKey,
      SMTP_URL: mail.smtpUrl,
      OUTBOUND_CA_FILE: certs.caFile,
      OUTBOUND_ALLOW_PRIVATE_CIDRS: LOOPBACK_CIDRS,
    }
    const workerLog = join(RESULTS, 'mixed-load-worker.log')
    rmSync(workerLog, { force: true })
    const worker = spawnChild('worker', {
      cmd: [process.execPath, 'worker/main.ts'],
      cwd: ROOT,
      logFile: workerLog,
      env: { ...process.env, ...platform, WORKER_METRICS_PORT: String(await freePort()), TEMPORAL_METRICS_PORT: String(await freePort()) },
    })
    h.own(worker)
    await waitUntil(worker, 'the worker started', async () => readFileSync(workerLog, 'utf8').includes('"worker started"'), 120_000)
    // --profile: the API writes a CPU profile (markdown) to bench/results/ when it stops.
    const api = await h.api(pg.url, {
      env: platform,
      args: h.flags.profile ? ['--cpu-prof-md', `--cpu-prof-dir=${RESULTS}`] : [],
      weightedAsUp: true,
    })

    // The tenants, through the API (the 100,000 members by SQL: no API could add them in reasonable time).
    say('setting up: sign-in users, PAT, 100,000 members, storage and a model version, webhook endpoints')
    const users = await Promise.all(
      Array.from({ length: signInLoops }, async () => {
        const user = { email: `mixed-${unique()}@example.test`, password: PASSWORD }
        must(await api.call('POST', '/v1/users', { body: user }), 201, 'register')
        return user
      }),
    )
    const pat = async (session: Record<string, string>, scopes: string[]) => ({
      authorization: `Bearer ${must(await api.call('POST', '/v1/api-keys', { headers: session, body: { name: 'mixed', scopes } }), 201, 'create PAT').json.data.token}`,
    })
    const reader = await pat((await ownerIn(api)).session, ['tenant:read'])
    const members = await ownerIn(api)
    if (selected.includes('members')) await seedMembers(api.databaseUrl, members.tenantId)
    const membersPat = await pat(members.session, ['tenant:read', 'tenant:manage']) // the member list asks tenant:manage
    const models = await modelsTenant(api)
    const hooks = await ownerIn(api)
    const receivers = await Promise.all(Array.from({ length: endpoints }, () => new Receiver(certs).start()))
    h.own({
      stop: async () => {
        for (const r of receivers) await r.stop()
      },
    })
    for (const r of receivers) {
      const created = must(
        await api.call('POST', '/v1/webhook-endpoints', {
          headers: hooks.session,
          body: { url: r.url(), events: ['audit.entry'], description: 'mixed load' },
        }),
        201,
        'create webhook endpoint',
      )
      r.secrets = [created.json.data.secret]
    }
    // Chromium only when its pages are driven: its processes are neighbours of every other workload.
    const browser = selected.includes('console') ? await launchChromium() : undefined
    if (browser) h.own({ stop: () => browser.close() })

    const all: Record<WorkloadKey, () => Workload> = {
      'sign-ins': () => signIns(api, users),
      pat: () => patReads(api, reader, patRate),
      members: () => memberPages(api, membersPat, memberLoops),
      builds: () => packageBuilds(api, { headers: models.pat, versionId: models.versionId, profileId: models.profileId, n: buildLoops }),
      webhooks: () => webhookFanOut(api, { session: hooks.session, receivers, window: webhookWindow }),
      console: () => consolePages(api, { session: members.session, browser: browser! }),
    }
    const workloads: Workload[] = selected.map((k) => all[k]())
    const consoleAt = selected.indexOf('console')
    say('warming every workload up (3 s each)')
    for (const w of workloads) {
      const o = await w.run(3)
      if (o.rate === 0 && errorsOf(o) > 0) throw new Error(`${w.name}: nothing but errors in the warm-up: ${describeErrors(o)}`)
    }

    // The mixed phase runs once, when its first row is measured; the other rows read its outcome.
    let mixed: Promise<Outcome[]> | undefined
    const mixedPhase = () =>
      (mixed ??= (async () => {
        const seconds = minutes * 60
        say(`mixed phase: every workload at once for ${minutes} minute(s); load average ${loadAverage()}`)
        const rss: { s: number; apiMb: number; workerMb: number; load: string }[] = []
        const t0 = performance.now()
        let running = true
        const sampler = (async () => {
          while (running) {
            rss.push({ s: Math.round((performance.now() - t0) / 1000), apiMb: rssMb(api.pid), workerMb: rssMb(worker.pid), load: loadAverage() })
            await Bun.sleep(RSS_EVERY_MS)
          }
        })()
        const cpuBefore = cpuSnapshot({ api: api.pid })
        const outcomes = await Promise.all(workloads.map((w) => w.run(seconds)))
        const cpu = cpuBetween(cpuBefore, cpuSnapshot({ api: api.pid }))
        running = false
        await sampler
        report(outcomes, rss, seconds, cpu)
        return outcomes
      })())

    function report(
      outcomes: Outcome[],
      rss: { s: number; apiMb: number; workerMb: number; load: string }[],
      seconds: number,
      cpu: { label: string; cpuSeconds: number }[],
    ) {
      // Minute 1 against the last minute (a quarter of the phase each when it is shorter than four minutes).
      const span = Math.min(60, seconds / 4)
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
      const growth = (k: 'apiMb' | 'workerMb') => {
        const first = mean(rss.filter((r) => r.s < span).map((r) => r[k]))
        const last = mean(rss.filter((r) => r.s >= seconds - span).map((r) => r[k]))
        return { firstMb: first, lastMb: last, growth: last / first - 1 }
      }
      const memory = { api: growth('apiMb'), worker: growth('workerMb') }
      const pages = consoleAt < 0 ? {} : outcomes[consoleAt]!.pages!
      const apiLog = logFindings(join(RESULTS, 'mixed-load-api.log'))
      const workerLogFindings = logFindings(workerLog)
      const totalErrors = outcomes.reduce((n, o) => n + errorsOf(o), 0)
      const lines = [
        '',
        `mixed phase (${minutes} min, load average at its end ${loadAverage()}):`,
        ...workloads.map(
          (w, i) =>
            `  ${w.name}: ${outcomes[i]!.rate.toFixed(2)} ${outcomes[i]!.unit}, ${errorsOf(outcomes[i]!)} errors${errorsOf(outcomes[i]!) ? ` (${describeErrors(outcomes[i]!)})` : ''}`,
        ),
        `  errors, all workloads: ${totalErrors} (target 0: ${totalErrors === 0 ? 'PASS' : 'MISS'})`,
        `  API log: ${apiLog.lines} lines, ${apiLog.fiveXx} requests answered ≥ 500, ${apiLog.errors} at level error; worker log: ${workerLogFindings.errors} at level error`,
        ...(['api', 'worker'] as const).map(
          (k) =>
            `  ${k} RSS: ${memory[k].firstMb.toFixed(0)} MB in the first ${span} s, ${memory[k].lastMb.toFixed(0)} MB in the last: ` +
            `${(memory[k].growth * 100).toFixed(1)}% (target < ${RSS_GROWTH * 100}%: ${memory[k].growth < RSS_GROWTH ? 'PASS' : 'MISS'})`,
        ),
        `  CPU seconds in the mixed phase (${seconds} s on ${cpus().length} cores), the largest: ` +
          cpu
            .filter((c) => !c.label.startsWith('api thread'))
            .slice(0, 10)
            .map((c) => `${c.label} ${c.cpuSeconds.toFixed(1)}`)
            .join(', '),
        `  the API's threads: ${cpu
          .filter((c) => c.label.startsWith('api thread'))
          .slice(0, 8)
          .map((c) => `${c.label.slice(11)} ${c.cpuSeconds.toFixed(1)}`)
          .join(', ')}`,
        '  console pages under load, ms (p50 / max, n):',
        ...Object.entries(pages).map(([p, ms]) => {
          const s = [...ms].sort((a, b) => a - b)
          return `    ${p.padEnd(9)} ${s.length ? `${quantile(s, 0.5).toFixed(0)} / ${s.at(-1)!.toFixed(0)}, ${s.length}` : 'none'}${s.length && quantile(s, 0.5) >= PAGE_MS ? '  MISS' : ''}`
        }),
      ]
      console.log(lines.join('\n'))
      writeFileSync(
        join(RESULTS, 'mixed-load-details.json'),
        `${JSON.stringify(
          {
            at: new Date().toISOString(),
            minutes,
            soloSeconds,
            loadAverageAtEnd: loadAverage(),
            cores: cpus().length,
            settings: { patRate, signInLoops, memberLoops, buildLoops, endpoints, webhookWindow },
            workloads: workloads.map((w, i) => ({ name: w.name, ...outcomes[i], pages: undefined })),
            totalErrors,
            apiLog,
            workerLog: workerLogFindings,
            memory,
            rss,
            consolePages: pages,
            cpuSeconds: cpu,
          },
          null,
          2,
        )}\n`,
      )
    }

    const solo = (w: Workload): Measure => ({ name: `solo: ${w.name}`, run: async () => sampleOf(await w.run(soloSeconds)) })
    const together = (i: number, extra: Partial<Measure> = {}): Measure => ({
      name: `mixed: ${workloads[i]!.name}`,
      targetOf: `solo: ${workloads[i]!.name}`,
      ...extra,
      run: async () => sampleOf((await mixedPhase())[i]!),
    })
    const page = (route: string): Measure => ({
      name: `mixed: console page ${route}, to interactive`,
      maxP50Ms: PAGE_MS,
      targetOf: `solo: ${workloads[consoleAt]!.name}`,
      run: async () => {
        const ms = [...(await mixedPhase())[consoleAt]!.pages![route]!].sort((a, b) => a - b)
        return { rate: ms.length / (minutes * 60), p50Ms: quantile(ms, 0.5), p99Ms: quantile(ms, 0.99) }
      },
    })
    return {
      baselines: workloads.map(solo),
      rows: [...selected.map((k, i) => together(i, k === 'pat' ? { maxP99Ms: PAT_P99_MS } : {})), ...(consoleAt < 0 ? [] : PAGES.map(page))],
      rounds: 1,
    }
  },
)

/** A tenant with ready storage, a model:read + model:write PAT, an embodiment profile, and a small onnx model
 *  version uploaded through its presigned URL and validated to ready: everything through the API. */
async function modelsTenant(api: BenchContext) {
  const { session } = await ownerIn(api)
  must(await api.call('PUT', '/v1/tenants/current/storage-bucket', { headers: session, body: { regionId: 'local' } }), 200, 'provision storage')
  await until('storage ready', async () => {
    const set = (await api.call('GET', '/v1/tenants/current/storage-bucket', { headers: session })).json?.data ?? {}
    return Object.values(set).length > 0 && Object.values(set).every((b: any) => b?.status === 'ready')
  })
  const key = must(
    await api.call('POST', '/v1/api-keys', { headers: session, body: { name: 'models', scopes: ['model:read', 'model:write'] } }),
    201,
    'create PAT',
  )
  const pat = { authorization: `Bearer ${key.json.data.token}` }
  const feature = (name: string, kind: string, shape: number[]) => ({ name, dtype: 'float32', shape, kind })
  const profile = must(
    await api.call('POST', '/v1/embodiment-profiles', {
      headers: pat,
      body: {
        name: 'mixed arm',
        robotType: 'so100',
        controlRateHz: 30,
        observationFeatures: [feature('observation/state', 'state', [7])],
        actionFeatures: [feature('actions', 'action', [10, 7])],
      },
    }),
    201,
    'create profile',
  )
  const checkpoint = new Uint8Array(256 * 1024).map((_, i) => (i * 31) % 251)
  const sha256 = new Bun.CryptoHasher('sha256').update(checkpoint).digest('hex')
  const path = 'checkpoints/mixed/policy.onnx'
  const version = must(
    await api.call('POST', '/v1/model-versions', {
      headers: pat,
      body: { name: 'mixed policy', format: 'onnx', source: { kind: 'imported_checkpoint', path, sizeBytes: checkpoint.length, sha256 } },
    }),
    201,
    'register model version',
  )
  const versionId = version.json.data.id as string
  const urls = must(await api.call('POST', `/v1/model-versions/${versionId}/upload-urls`, { headers: pat }), 200, 'upload URLs')
  const put = await fetch(urls.json.data.uploads[0].url, { method: 'PUT', body: checkpoint })
  if (!put.ok) throw new Error(`upload: ${put.status} ${await put.text()}`)
  must(await api.call('POST', `/v1/model-versions/${versionId}/validations`, { headers: pat }), 202, 'validate')
  await until('model version ready', async () => (await api.call('GET', `/v1/model-versions/${versionId}`, { headers: pat })).json?.data?.status === 'ready')
  return { pat, versionId, profileId: profile.json.data.id as string }
}

async function until(what: string, ok: () => Promise<boolean>, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`)
    await Bun.sleep(200)
  }
}
