// API keys: mine (and, for apikey:manage, every member's, with revoke-by-member); create with scopes and expiry,
// tenant-wide or for one project, the token shown once with a copy button and gone when the panel closes; revoke.
import { useState } from 'preact/hooks'
import { PERMISSIONS, PROJECT_PERMISSIONS, type Permission } from '../../identity/permissions'
import { api, must } from './api'
import type { components } from './api-types.gen'
import type { PageProps } from './page'
import { ProblemMessage } from './problem'
import { Empty, OnceSecret, Show, useAction, useLoad, when } from './ui'

export function ApiKeys({ can }: PageProps) {
  const [scope, setScope] = useState<'self' | 'tenant'>('self')
  const [list, reload] = useLoad(() => must(api.GET('/v1/api-keys', { params: { query: { scope, pageSize: 100 } } })), [scope])
  const [action, run] = useAction()
  const [projects] = useLoad(() => must(api.GET('/v1/projects', { params: { query: { pageSize: 100 } } })).then((p) => p.data), [])
  const projectName = (id: string | null) =>
    id === null ? 'tenant-wide' : ((projects.state === 'ready' ? projects.value.find((p) => p.id === id)?.name : undefined) ?? id)

  const revoke = (apiKeyId: string) =>
    run(async () => {
      await must(api.DELETE('/v1/api-keys/{apiKeyId}', { params: { path: { apiKeyId } } }))
      reload()
    })
  const revokeMember = (membershipId: string) =>
    run(async () => {
      await must(api.POST('/v1/api-keys/memberships/{membershipId}/revocations', { params: { path: { membershipId } } }))
      reload()
    })

  return (
    <>
      {can('apikey:write') && (
        <CreateKey
          offered={PERMISSIONS.filter(can)}
          projects={projects.state === 'ready' ? projects.value.filter((p) => !p.archived) : []}
          onCreated={reload}
        />
      )}
      <section aria-labelledby="keys-title">
        <h2 id="keys-title">{scope === 'self' ? 'Your keys' : "Every member's keys"}</h2>
        {can('apikey:manage') && (
          <p>
            <button type="button" onClick={() => setScope(scope === 'self' ? 'tenant' : 'self')}>
              {scope === 'self' ? "Show every member's keys" : 'Show only your keys'}
            </button>
          </p>
        )}
        <ProblemMessage problem={action.problem} />
        <Show loaded={list}>
          {(page) =>
            page.data.length === 0 ? (
              <Empty>No API key yet.</Empty>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Prefix</th>
                    <th scope="col">Project</th>
                    <th scope="col">Scopes</th>
                    <th scope="col">Expires</th>
                    <th scope="col">Last used</th>
                    <th scope="col">State</th>
                    <th scope="col">
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((k) => (
                    <tr key={k.id}>
                      <td>{k.name}</td>
                      <td>
                        <code>{k.prefix}</code>
                      </td>
                      <td>{projectName(k.projectId)}</td>
                      <td>{k.scopes.join(', ')}</td>
                      <td>{when(k.expiresAt)}</td>
                      <td>{when(k.lastUsedAt)}</td>
                      <td>{k.revokedAt ? `revoked ${when(k.revokedAt)}` : 'live'}</td>
                      <td>
                        {!k.revokedAt && (scope === 'self' ? can('apikey:write') : can('apikey:manage')) && (
                          <button type="button" class="danger" onClick={() => revoke(k.id)} aria-label={`Revoke ${k.name}`}>
                            Revoke
                          </button>
                        )}
                        {scope === 'tenant' && !k.revokedAt && (
                          <button
                            type="button"
                            class="danger"
                            onClick={() => revokeMember(k.membershipId)}
                            aria-label={`Revoke every key of the member owning ${k.name}`}
                          >
                            Revoke all of this member's
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Show>
      </section>
    </>
  )
}

type Project = components['schemas']['ProjectDto']

/** A project key's scopes are project points only; what it may use of them is what its member holds in the project
 *  (a project role may give more than the tenant role), which the server checks. */
function CreateKey({ offered, projects, onCreated }: { offered: Permission[]; projects: Project[]; onCreated: () => void }) {
  const [action, run] = useAction()
  const [projectId, setProjectId] = useState('')
  const points = projectId ? PROJECT_PERMISSIONS : offered
  const [token, setToken] = useState<string | null>(null) // held by this panel only: never stored, gone on close

  const create = (e: Event) => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const expiry = String(data.get('expires') ?? '')
    return run(async () => {
      const { data: created } = await must(
        api.POST('/v1/api-keys', {
          body: {
            name: String(data.get('name')),
            scopes: data.getAll('scopes').map(String) as Permission[],
            ...(expiry ? { expiresAt: new Date(`${expiry}T23:59:59`).toISOString() } : {}),
            ...(projectId ? { projectId } : {}),
          },
        }),
      )
      form.reset()
      setProjectId('')
      setToken(created.token)
      onCreated()
    })
  }

  return (
    <section aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      {token ? (
        <OnceSecret label="Your new token" value={token} onDone={() => setToken(null)} />
      ) : (
        <form onSubmit={create}>
          <label for="key-name">Name</label>
          <input id="key-name" name="name" required maxLength={100} />
          <label for="key-project">Acts in</label>
          <select id="key-project" value={projectId} onChange={(e) => setProjectId(e.currentTarget.value)}>
            <option value="">The whole tenant</option>
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                Project {p.name}
              </option>
            ))}
          </select>
          <fieldset>
            <legend>{projectId ? 'Scopes (project points, within what you hold in the project)' : 'Scopes (within your own permissions)'}</legend>
            {points.map((p) => (
              <label key={p} class="check">
                <input type="checkbox" name="scopes" value={p} /> {p}
              </label>
            ))}
          </fieldset>
          <label for="key-expires">Expires on (empty: 90 days; at most 366)</label>
          <input id="key-expires" name="expires" type="date" />
          <button type="submit" disabled={action.busy}>
            Create key
          </button>
        </form>
      )}
      <ProblemMessage problem={action.problem} />
    </section>
  )
}
