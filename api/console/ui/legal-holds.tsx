// Legal holds of the current tenant (legal_hold:manage: owners): every hold, newest first, active or released;
// place one (a matter, a reason and exactly one scope: the whole tenant, one member or one project); release one,
// which is final. The API's refusals (a scope that is not there, a second release) are shown as it says them.
import { useState } from 'preact/hooks'
import { api, must } from './api'
import type { components } from './api-types.gen'
import type { PageProps } from './page'
import { ProblemMessage } from './problem'
import { Empty, Show, useAction, useLoad, usePaging, when } from './ui'

type Hold = components['schemas']['LegalHoldDto']
type Kind = Hold['scope']['kind']

const members = () => must(api.GET('/v1/tenants/current/memberships', { params: { query: { pageSize: 100, status: 'active' } } })).then((p) => p.data)
const projects = () => must(api.GET('/v1/projects', { params: { query: { pageSize: 100 } } })).then((p) => p.data)

export function LegalHolds(_: PageProps) {
  const { pageToken, pager } = usePaging([])
  const [list, reload] = useLoad(() => must(api.GET('/v1/tenants/current/legal-holds', { params: { query: { pageSize: 50, pageToken } } })), [pageToken])
  // Names for the ids a scope holds: the hold stores ids only.
  const [people] = useLoad(members, [])
  const [work] = useLoad(projects, [])
  const [action, run] = useAction()
  const [confirming, setConfirming] = useState<string | null>(null)
  const named = (h: Hold) => {
    if (h.scope.kind === 'tenant') return 'the whole tenant'
    if (h.scope.kind === 'member') {
      const m = people.state === 'ready' ? people.value.find((p) => p.userId === h.scope.userId) : undefined
      return `member ${m?.email ?? h.scope.userId}`
    }
    const p = work.state === 'ready' ? work.value.find((p) => p.id === h.scope.projectId) : undefined
    return `project ${p?.name ?? h.scope.projectId}`
  }
  const release = (holdId: string) =>
    run(async () => {
      await must(api.POST('/v1/tenants/current/legal-holds/{holdId}/release', { params: { path: { holdId } } }))
      setConfirming(null)
      reload()
    })

  return (
    <>
      <Place people={people.state === 'ready' ? people.value : []} work={work.state === 'ready' ? work.value : []} onPlaced={reload} />
      <section aria-labelledby="holds-title">
        <h2 id="holds-title">Holds</h2>
        <p>Whom a hold covers is confidential: it is not in the audit log's entries, and the held member is not told.</p>
        <ProblemMessage problem={action.problem} />
        <Show loaded={list}>
          {(page) =>
            page.data.length === 0 ? (
              <Empty>No legal hold.</Empty>
            ) : (
              <>
                <table id="legal-holds">
                  <thead>
                    <tr>
                      <th scope="col">Matter</th>
                      <th scope="col">Reason</th>
                      <th scope="col">Holds</th>
                      <th scope="col">Placed</th>
                      <th scope="col">Status</th>
                      <th scope="col">
                        <span class="sr-only">Action</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.data.map((h) => (
                      <tr key={h.id}>
                        <td>{h.matter}</td>
                        <td>{h.reason}</td>
                        <td>{named(h)}</td>
                        <td>{when(h.createdAt)}</td>
                        <td>{h.status === 'active' ? 'active' : `released ${when(h.releasedAt)}`}</td>
                        <td>
                          {h.status === 'active' &&
                            (confirming === h.id ? (
                              <>
                                <button type="button" class="danger" onClick={() => release(h.id)} disabled={action.busy}>
                                  Confirm release of {h.matter}
                                </button>{' '}
                                <button type="button" onClick={() => setConfirming(null)}>
                                  Keep
                                </button>
                              </>
                            ) : (
                              <button type="button" onClick={() => setConfirming(h.id)} aria-label={`Release ${h.matter}`}>
                                Release
                              </button>
                            ))}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                {pager(page.nextPageToken)}
              </>
            )
          }
        </Show>
      </section>
    </>
  )
}

type Member = components['schemas']['CurrentTenantMembershipDto']
type ProjectDto = components['schemas']['ProjectDto']

function Place({ people, work, onPlaced }: { people: Member[]; work: ProjectDto[]; onPlaced: () => void }) {
  const [action, run] = useAction()
  const [kind, setKind] = useState<Kind>('tenant')
  const place = (e: Event) => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const scope =
      kind === 'member' ? { kind, userId: String(data.get('userId')) } : kind === 'project' ? { kind, projectId: String(data.get('projectId')) } : { kind }
    return run(async () => {
      await must(api.POST('/v1/tenants/current/legal-holds', { body: { matter: String(data.get('matter')), reason: String(data.get('reason')), scope } }))
      form.reset()
      setKind('tenant')
      onPlaced()
    })
  }
  return (
    <section aria-labelledby="place-hold-title">
      <h2 id="place-hold-title">Place a hold</h2>
      <form onSubmit={place}>
        <label for="hold-matter">Matter</label>
        <input id="hold-matter" name="matter" required maxLength={200} />
        <label for="hold-reason">Reason</label>
        <textarea id="hold-reason" name="reason" required maxLength={2000} />
        <fieldset>
          <legend>What it holds</legend>
          {(
            [
              ['tenant', 'The whole tenant'],
              ['member', 'One member'],
              ['project', 'One project'],
            ] as const
          ).map(([k, label]) => (
            <label key={k} class="check">
              <input type="radio" name="kind" value={k} checked={kind === k} onChange={() => setKind(k)} /> {label}
            </label>
          ))}
        </fieldset>
        {kind === 'member' && (
          <>
            <label for="hold-member">Member</label>
            <select id="hold-member" name="userId" required>
              <option value="">Choose a member</option>
              {people.map((m) => (
                <option key={m.userId} value={m.userId}>
                  {m.email}
                </option>
              ))}
            </select>
          </>
        )}
        {kind === 'project' && (
          <>
            <label for="hold-project">Project</label>
            <select id="hold-project" name="projectId" required>
              <option value="">Choose a project</option>
              {work.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                  {p.archived ? ' (archived)' : ''}
                </option>
              ))}
            </select>
          </>
        )}
        <button type="submit" disabled={action.busy}>
          Place hold
        </button>
      </form>
      <ProblemMessage problem={action.problem} />
    </section>
  )
}
