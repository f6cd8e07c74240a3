// The tenant's audit trail: a time window with filters (action or its prefix, actor, outcome), server paging, the
// chain verified over the window, and an export of the window as a file (its progress, then its download link).
import { useEffect, useState } from 'preact/hooks'
import { api, must } from './api'
import type { PageProps } from './page'
import type { components } from './api-types.gen'
import { ProblemMessage } from './problem'
import { Empty, Show, useAction, useLoad, usePaging, when } from './ui'

type Export = components['schemas']['AuditExportDto']
type Filters = { from: string; to: string; action: string; actorId: string; outcome: '' | 'success' | 'failure' }

const DAY = 86_400_000
const localInput = (t: number) => new Date(t - new Date(t).getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
const iso = (local: string) => new Date(local).toISOString()

export function Audit(_: PageProps) {
  const [filters, setFilters] = useState<Filters>(() => ({
    from: localInput(Date.now() - DAY),
    to: localInput(Date.now() + 60_000),
    action: '',
    actorId: '',
    outcome: '',
  }))
  const { pageToken, pager, restart } = usePaging([])
  const span = { from: iso(filters.from), to: iso(filters.to) }
  const [list] = useLoad(
    () =>
      must(
        api.GET('/v1/tenants/current/audit-log', {
          params: {
            query: {
              ...span,
              pageSize: 50,
              pageToken,
              action: filters.action || undefined,
              actorId: filters.actorId || undefined,
              outcome: filters.outcome || undefined,
            },
          },
        }),
      ),
    [filters, pageToken],
  )

  const apply = (e: Event) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget as HTMLFormElement)
    restart()
    setFilters({
      from: String(f.get('from')),
      to: String(f.get('to')),
      action: String(f.get('action')).trim(),
      actorId: String(f.get('actor')).trim(),
      outcome: f.get('outcome') as Filters['outcome'],
    })
  }

  return (
    <>
      <section aria-labelledby="audit-title">
        <h2 id="audit-title">Entries</h2>
        <form onSubmit={apply} class="inline">
          <label for="audit-from">From</label>
          <input id="audit-from" name="from" type="datetime-local" required defaultValue={filters.from} />
          <label for="audit-to">To</label>
          <input id="audit-to" name="to" type="datetime-local" required defaultValue={filters.to} />
          <label for="audit-action">Action or prefix (membership.)</label>
          <input id="audit-action" name="action" defaultValue={filters.action} />
          <label for="audit-actor">Actor id</label>
          <input id="audit-actor" name="actor" defaultValue={filters.actorId} />
          <label for="audit-outcome">Outcome</label>
          <select id="audit-outcome" name="outcome">
            <option value="">Any</option>
            <option value="success">success</option>
            <option value="failure">failure</option>
          </select>
          <button type="submit">Show</button>
        </form>
        <Show loaded={list}>
          {(page) => (
            <>
              {page.data.length === 0 ? (
                <Empty>No entry in this window.</Empty>
              ) : (
                <table>
                  <thead>
                    <tr>
                      <th scope="col">#</th>
                      <th scope="col">When</th>
                      <th scope="col">Actor</th>
                      <th scope="col">Action</th>
                      <th scope="col">Target</th>
                      <th scope="col">Outcome</th>
                      <th scope="col">Address</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.data.map((a) => (
                      <tr key={a.id}>
                        <td>{a.seq}</td>
                        <td>{when(a.occurredAt)}</td>
                        <td>{a.actor.label ?? a.actor.id ?? a.actor.type}</td>
                        <td>
                          <code>{a.action}</code>
                        </td>
                        <td>{a.target ? `${a.target.type} ${a.target.id ?? ''}` : '—'}</td>
                        <td>
                          {a.outcome}
                          {a.reason ? `: ${a.reason}` : ''}
                        </td>
                        <td>{a.ip ?? '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
              {pager(page.nextPageToken)}
            </>
          )}
        </Show>
      </section>
      <ChainAndExport span={span} />
    </>
  )
}

function ChainAndExport({ span }: { span: { from: string; to: string } }) {
  const [action, run] = useAction()
  const [verdict, setVerdict] = useState('')
  const [job, setJob] = useState<Export | null>(null)

  // An export runs as a workflow: its state is read again until it has finished.
  useEffect(() => {
    if (!job || job.status === 'succeeded' || job.status === 'failed') return
    const t = setTimeout(
      () =>
        run(async () => {
          setJob((await must(api.GET('/v1/tenants/current/audit-log/exports/{exportId}', { params: { path: { exportId: job.id } } }))).data)
        }),
      1000,
    )
    return () => clearTimeout(t)
  }, [job])

  const verify = () =>
    run(async () => {
      const { data: v } = await must(api.POST('/v1/tenants/current/audit-log/verifications', { body: span }))
      setVerdict(
        v.intact ? `Intact: ${v.verified} entries recomputed (#${v.firstSeq ?? '—'} to #${v.lastSeq ?? '—'}).` : `Broken at entry #${v.firstBrokenSeq}.`,
      )
    })
  const exportWindow = () =>
    run(async () => {
      setJob((await must(api.POST('/v1/tenants/current/audit-log/exports', { body: span }))).data)
    })

  return (
    <section aria-labelledby="chain-title">
      <h2 id="chain-title">Verify and export this window</h2>
      <div class="actions">
        <button type="button" onClick={verify} disabled={action.busy}>
          Verify the chain
        </button>
        <button type="button" onClick={exportWindow} disabled={action.busy || (job !== null && job.status !== 'succeeded' && job.status !== 'failed')}>
          Export
        </button>
      </div>
      {verdict && <p role="status">{verdict}</p>}
      {job && (
        <p id="export-state" role="status">
          Export {job.status}: {job.entriesWritten} entries{job.bytes !== null ? `, ${job.bytes} bytes gzip` : ''}.{job.error && ` ${job.error}`}
          {job.download && (
            <>
              {' '}
              <a href={job.download.url} download>
                Download (gzip NDJSON)
              </a>
              , link valid until {when(job.download.expiresAt)}; SHA-256 <code>{job.sha256}</code>.
            </>
          )}
        </p>
      )}
      <ProblemMessage problem={action.problem} />
    </section>
  )
}
