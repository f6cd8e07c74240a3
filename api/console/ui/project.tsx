// One project: its details and its members (project role, overlay, what each holds now, the expiry, an expired
// membership marked). Adding, changing and removing members is offered to whoever holds project:manage in this
// project: the tenant role's project points, or the caller's own project membership, as the list answers them.
import { useState } from 'preact/hooks'
import { tenantProjectPermissions, type Permission } from '../../identity/permissions'
import { api, must, withEtag } from './api'
import type { components } from './api-types.gen'
import type { PageProps } from './page'
import { ProblemMessage } from './problem'
import { expiryOf, type MemberFieldValues, MemberFields } from './project-member-fields'
import { Empty, Show, StaleNotice, useAction, useLoad, useVersionedAction, when } from './ui'

type ProjectMember = components['schemas']['ProjectMemberDto']

export function Project({ id, me, can }: PageProps & { id: string }) {
  const [project] = useLoad(() => must(api.GET('/v1/projects/{projectId}', { params: { path: { projectId: id } } })), [id])
  const [members, reload] = useLoad(
    () => must(api.GET('/v1/projects/{projectId}/members', { params: { path: { projectId: id }, query: { pageSize: 100 } } })),
    [id],
  )
  const [editing, setEditing] = useState<string | null>(null)

  return (
    <>
      <p>
        <a href="#/projects">All projects</a>
      </p>
      <Show loaded={project}>
        {({ data: p }) => (
          <section aria-labelledby="project-title">
            <h2 id="project-title">
              {p.name}
              {p.archived && ' (archived)'}
            </h2>
            <p>
              Slug <code>{p.slug}</code> · created {when(p.createdAt)}
            </p>
            {p.description && <p>{p.description}</p>}
          </section>
        )}
      </Show>
      <Show loaded={members}>
        {(page) => {
          const mine = page.data.find((m) => m.userId === me.user.id)
          const role = me.currentMembership?.role
          const held = new Set<string>(mine && !mine.expired ? mine.effectivePermissions : role ? tenantProjectPermissions(role) : [])
          const manage = held.has('project:manage')
          return (
            <>
              <MemberTable members={page.data} manage={manage} onManage={setEditing} />
              {manage && editing && (
                <EditProjectMember
                  key={editing}
                  projectId={id}
                  userId={editing}
                  onDone={() => {
                    setEditing(null)
                    reload()
                  }}
                  onChanged={reload}
                />
              )}
              {manage && <AddProjectMember projectId={id} pickFromTenant={can('tenant:manage')} onAdded={reload} />}
            </>
          )
        }}
      </Show>
    </>
  )
}

const overlayText = (m: ProjectMember) => [...m.overlay.grant.map((p) => `+${p}`), ...m.overlay.deny.map((p) => `−${p}`)].join(', ') || '—'

function MemberTable({ members, manage, onManage }: { members: ProjectMember[]; manage: boolean; onManage: (userId: string) => void }) {
  return (
    <section aria-labelledby="project-members-title">
      <h2 id="project-members-title">Project members</h2>
      {members.length === 0 ? (
        <Empty>No project member yet: the tenant's roles alone decide who works here.</Empty>
      ) : (
        <table id="project-members">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Tenant role</th>
              <th scope="col">Project role</th>
              <th scope="col">Overlay</th>
              <th scope="col">Holds here now</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span class="sr-only">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {members.map((m) => (
              <tr key={m.id} class={m.expired ? 'expired' : undefined}>
                <td>{m.email}</td>
                <td>{m.tenantRole}</td>
                <td>{m.role}</td>
                <td>{overlayText(m)}</td>
                <td>{m.effectivePermissions.join(', ') || 'nothing'}</td>
                <td>
                  {when(m.expiresAt)}
                  {m.expired && <strong> · expired</strong>}
                </td>
                <td>
                  {manage && (
                    <button type="button" onClick={() => onManage(m.userId)} aria-label={`Manage ${m.email} in this project`}>
                      Manage
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

const body = (v: MemberFieldValues) => ({ role: v.role, overlay: { grant: v.grant, deny: v.deny } })

function AddProjectMember({ projectId, pickFromTenant, onAdded }: { projectId: string; pickFromTenant: boolean; onAdded: () => void }) {
  const [action, run] = useAction()
  const [userId, setUserId] = useState('')
  const [fields, setFields] = useState<MemberFieldValues>({ role: 'reader', expires: '', grant: [], deny: [] })
  // Only tenant:manage lists the tenant's members; a maintainer without it names the member by user id.
  const [tenantMembers] = useLoad(
    () =>
      pickFromTenant
        ? must(api.GET('/v1/tenants/current/memberships', { params: { query: { pageSize: 100, status: 'active' } } })).then((p) => p.data)
        : Promise.resolve(null),
    [pickFromTenant],
  )
  const add = (e: Event) => {
    e.preventDefault()
    const expiresAt = expiryOf(fields.expires)
    return run(async () => {
      await must(
        api.POST('/v1/projects/{projectId}/members', {
          params: { path: { projectId } },
          body: { userId, ...body(fields), ...(expiresAt ? { expiresAt } : {}) },
        }),
      )
      setUserId('')
      setFields({ role: 'reader', expires: '', grant: [], deny: [] })
      onAdded()
    })
  }
  return (
    <section aria-labelledby="add-project-member-title">
      <h2 id="add-project-member-title">Add a member to this project</h2>
      <Show loaded={tenantMembers}>
        {(list) => (
          <form onSubmit={add}>
            <label for="project-member-user">{list ? 'Tenant member' : 'User id of a tenant member'}</label>
            {list ? (
              <select id="project-member-user" required value={userId} onChange={(e) => setUserId(e.currentTarget.value)}>
                <option value="">Choose a member</option>
                {list.map((m) => (
                  <option key={m.userId} value={m.userId}>
                    {m.email} ({m.role})
                  </option>
                ))}
              </select>
            ) : (
              <input id="project-member-user" required value={userId} onInput={(e) => setUserId(e.currentTarget.value.trim())} />
            )}
            <MemberFields prefix="add-member" value={fields} onChange={setFields} />
            <button type="submit" disabled={action.busy}>
              Add to project
            </button>
          </form>
        )}
      </Show>
      <ProblemMessage problem={action.problem} />
    </section>
  )
}

interface EditProps {
  projectId: string
  userId: string
  onDone: () => void
  onChanged: () => void
}

/** One project membership read with its ETag; a change or removal sends it back as If-Match. */
function EditProjectMember({ projectId, userId, onDone, onChanged }: EditProps) {
  const path = { projectId, userId }
  const [loaded, reload] = useLoad(() => withEtag(api.GET('/v1/projects/{projectId}/members/{userId}', { params: { path } })), [userId])
  const [action, guarded, stale] = useVersionedAction(() => {
    reload()
    onChanged()
  })
  const [confirming, setConfirming] = useState(false)

  return (
    <section aria-labelledby="edit-project-member-title" class="panel">
      <Show loaded={loaded}>
        {({ body: { data: m }, etag }) => {
          const readExpiry = m.expiresAt?.slice(0, 10) ?? ''
          const save = (v: MemberFieldValues) =>
            guarded(async () => {
              // The expiry goes only when changed: a date holds no time, and re-sending would move it.
              const expiry = v.expires === readExpiry ? {} : { expiresAt: expiryOf(v.expires) }
              await must(
                api.PATCH('/v1/projects/{projectId}/members/{userId}', { params: { path }, headers: { 'if-match': etag }, body: { ...body(v), ...expiry } }),
              )
              onDone()
            })
          const remove = () =>
            guarded(async () => {
              await must(api.DELETE('/v1/projects/{projectId}/members/{userId}', { params: { path }, headers: { 'if-match': etag } }))
              onDone()
            })
          return (
            <>
              <h2 id="edit-project-member-title">Manage {m.email} in this project</h2>
              <StaleNotice problem={stale} what="project membership" />
              <EditForm
                key={etag}
                initial={{ role: m.role, expires: readExpiry, grant: m.overlay.grant as Permission[], deny: m.overlay.deny as Permission[] }}
                busy={action.busy}
                onSave={save}
                onClose={onDone}
              />
              {confirming ? (
                <p>
                  Remove {m.email} from this project? What their tenant role gives here stays.{' '}
                  <button type="button" class="danger" onClick={remove} disabled={action.busy}>
                    Confirm removal from the project
                  </button>{' '}
                  <button type="button" onClick={() => setConfirming(false)}>
                    Keep
                  </button>
                </p>
              ) : (
                <p>
                  <button type="button" class="danger" onClick={() => setConfirming(true)}>
                    Remove from project
                  </button>
                </p>
              )}
              <ProblemMessage problem={action.problem} />
            </>
          )
        }}
      </Show>
    </section>
  )
}

function EditForm({
  initial,
  busy,
  onSave,
  onClose,
}: {
  initial: MemberFieldValues
  busy: boolean
  onSave: (v: MemberFieldValues) => void
  onClose: () => void
}) {
  const [fields, setFields] = useState(initial)
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault()
        onSave(fields)
      }}
    >
      <MemberFields prefix="edit-member" value={fields} onChange={setFields} />
      <button type="submit" disabled={busy}>
        Save
      </button>
      <button type="button" onClick={onClose}>
        Close
      </button>
    </form>
  )
}
