// The tenant's storage: provisioning its buckets in a region (progress until ready), the usage summary as a chart,
// and reconciliation jobs with their progress (billing roles).
import { api, must } from './api'
import type { PageProps } from './page'
import type { components } from './api-types.gen'
import { ProblemMessage } from './problem'
import { Empty, Show, useAction, useLoad, usePoll, when } from './ui'

type BucketSet = components['schemas']['StorageBucketSetDto']
type Summary = components['schemas']['TenantStorageSummaryDto']

const bytes = (n: number) =>
  n < 1024
    ? `${n} B`
    : n < 1024 ** 2
      ? `${(n / 1024).toFixed(1)} KiB`
      : n < 1024 ** 3
        ? `${(n / 1024 ** 2).toFixed(1)} MiB`
        : `${(n / 1024 ** 3).toFixed(2)} GiB`

export function Storage({ can }: PageProps) {
  return (
    <>
      <Buckets mayProvision={can('tenant:manage')} />
      {can('billing:read') && <Reconciliation mayStart={can('billing:write')} />}
    </>
  )
}

function Buckets({ mayProvision }: { mayProvision: boolean }) {
  const [set, reload] = useLoad(() => must(api.GET('/v1/tenants/current/storage-bucket')).then((r) => r.data), [])
  const [regions] = useLoad(() => must(api.GET('/v1/storage-regions')).then((r) => r.data), [])
  const [action, run] = useAction()
  const buckets = (s: BucketSet) => [s.bucket, s.datasetBucket, s.exportBucket].filter((b) => b !== null)
  usePoll(set.state === 'ready' && buckets(set.value).some((b) => b.status === 'provisioning'), reload)

  const provision = (e: Event) => {
    e.preventDefault()
    const regionId = String(new FormData(e.currentTarget as HTMLFormElement).get('region'))
    return run(async () => {
      await must(api.PUT('/v1/tenants/current/storage-bucket', { body: { regionId } }))
      reload()
    })
  }

  return (
    <section aria-labelledby="buckets-title">
      <h2 id="buckets-title">Buckets</h2>
      <Show loaded={set}>
        {(s) =>
          buckets(s).length === 0 ? (
            <>
              <Empty>No storage yet.</Empty>
              {mayProvision && (
                <Show loaded={regions}>
                  {(r) => (
                    <form onSubmit={provision} class="inline">
                      <label for="region">Region</label>
                      <select id="region" name="region">
                        {r.regions
                          .filter((g) => g.available)
                          .map((g) => (
                            <option key={g.id} value={g.id} selected={g.id === r.defaultRegionId}>
                              {g.name}
                            </option>
                          ))}
                      </select>
                      <button type="submit" disabled={action.busy}>
                        Provision storage
                      </button>
                    </form>
                  )}
                </Show>
              )}
            </>
          ) : (
            <>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Bucket</th>
                    <th scope="col">Kind</th>
                    <th scope="col">Region</th>
                    <th scope="col">Status</th>
                    <th scope="col">Versioning</th>
                    <th scope="col">Expiry</th>
                  </tr>
                </thead>
                <tbody>
                  {buckets(s).map((b) => (
                    <tr key={b.name}>
                      <td>
                        <code>{b.name}</code>
                      </td>
                      <td>{b.kind}</td>
                      <td>{b.regionId}</td>
                      <td>
                        {b.status}
                        {b.failureReason ? `: ${b.failureReason}` : ''}
                      </td>
                      <td>{b.versioning ? 'on' : 'off'}</td>
                      <td>{b.expireAfterDays ? `${b.expireAfterDays} days` : '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {buckets(s).every((b) => b.status === 'ready') && <Usage />}
            </>
          )
        }
      </Show>
      <ProblemMessage problem={action.problem} />
    </section>
  )
}

function Usage() {
  const [summary] = useLoad(() => must(api.GET('/v1/tenants/current/storage-summary')).then((r) => r.data), [])
  return (
    <>
      <h3>Usage</h3>
      <Show loaded={summary}>{(s) => <UsageChart summary={s} />}</Show>
    </>
  )
}

/** Bytes per bucket as bars (drawn with SVG attributes: the CSP allows no inline style), the figures beside them. */
function UsageChart({ summary }: { summary: Summary }) {
  const max = Math.max(1, ...summary.buckets.map((b) => b.bytes))
  const row = 28
  return (
    <>
      <p id="usage-total">
        {summary.totalObjects} objects, {bytes(summary.totalBytes)} in total (counted {when(summary.computedAt)}).
      </p>
      {/* biome-ignore lint/a11y/noSvgWithoutTitle: named by aria-labelledby (the total above it), which the rule does not follow */}
      <svg role="img" aria-labelledby="usage-total" width="520" height={row * summary.buckets.length + 4} class="chart">
        {summary.buckets.map((b, i) => (
          <g key={b.bucket}>
            <text x="0" y={i * row + 18}>
              {b.kind}
            </text>
            <rect x="80" y={i * row + 4} height="18" width={Math.max(2, (300 * b.bytes) / max)} class="bar" />
            <text x={90 + (300 * b.bytes) / max} y={i * row + 18}>
              {bytes(b.bytes)} · {b.objectCount} objects
            </text>
          </g>
        ))}
      </svg>
    </>
  )
}

function Reconciliation({ mayStart }: { mayStart: boolean }) {
  const [jobs, reload] = useLoad(() => must(api.GET('/v1/tenants/current/storage-reconciliation-jobs', { params: { query: { pageSize: 20 } } })), [])
  const [action, run] = useAction()
  usePoll(jobs.state === 'ready' && jobs.value.data.some((j) => j.status === 'queued' || j.status === 'running'), reload)
  const start = (dryRun: boolean) =>
    run(async () => {
      await must(api.POST('/v1/tenants/current/storage-reconciliation-jobs', { body: { dryRun } }))
      reload()
    })
  return (
    <section aria-labelledby="reconcile-title">
      <h2 id="reconcile-title">Reconciliation</h2>
      {mayStart && (
        <div class="actions">
          <button type="button" onClick={() => start(true)} disabled={action.busy}>
            Check (dry run)
          </button>
          <button type="button" onClick={() => start(false)} disabled={action.busy}>
            Reconcile
          </button>
        </div>
      )}
      <ProblemMessage problem={action.problem} />
      <Show loaded={jobs}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No reconciliation yet.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Started</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Status</th>
                  <th scope="col">Objects scanned</th>
                  <th scope="col">Orphans</th>
                  <th scope="col">Missing</th>
                  <th scope="col">Finished</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((j) => (
                  <tr key={j.id}>
                    <td>{when(j.createdAt)}</td>
                    <td>{j.dryRun ? 'dry run' : 'reconcile'}</td>
                    <td>{j.status}</td>
                    <td>{j.objectsScanned}</td>
                    <td>{j.orphanCount}</td>
                    <td>{j.missingCount}</td>
                    <td>{when(j.finishedAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Show>
    </section>
  )
}
