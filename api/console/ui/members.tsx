// Members of the current tenant: server-side search, filters, paging and the total count; invite; change a member's
// role or status with the ETag the member was read with (a concurrent change answers 412: shown, then reloaded);
// remove (the last owner's protection is the server's 409, shown as it is); pending invitations and their revocation.
import { useEffect, useState } from 'preact/hooks'
import { ROLES, ROLE_PERMISSIONS, type Role } from '../../identity/permissions'
import { api, must, withEtag } from './api'
import type { PageProps } from './page'
import type { components } from './api-types.gen'
import { ProblemMessage } from './problem'
import { Empty, Show, StaleNotice, useAction, useLoad, usePaging, useVersionedAction, when } from './ui'

type Member = components['schemas']['CurrentTenantMembershipDto']
type Status = NonNullable<Member['status']>
const PAGE_SIZE = 20

/** Roles the caller may grant: those carrying nothing the caller does not hold (the server checks the same). */
const grantable = (mine: Role) => ROLES.filter((r) => ROLE_PERMISSIONS[r].every((p) => ROLE_PERMISSIONS[mine].includes(p)))

function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value)
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms)
    return () => clearTimeout(t)
  }, [value, ms])
  return settled
}

export function Members({ me }: PageProps) {
  const roles = grantable(me.currentMembership!.role)
  const [search, setSearch] = useState('')
  const q = useDebounced(search.trim(), 150) // one request per pause in typing, not per key
  const [status, setStatus] = useState<Status | ''>('')
  const [role, setRole] = useState<Role | ''>('')
  const [editing, setEditing] = useState<string | null>(null)
  const { pageToken, pager } = usePaging([q, status, role])
  const [list, reloadList] = useLoad(
    () =>
      must(
        api.GET('/v1/tenants/current/memberships', {
          params: { query: { pageSize: PAGE_SIZE, q: q || undefined, status: status || undefined, role: role || undefined, pageToken } },
        }),
      ).then((page) => ({ ...page, q })),
    [q, status, role, pageToken],
  )
  // The search the rows on screen answer: until they answer the one typed, the results are marked busy.
  const shown = list.state === 'ready' ? list.value.q : undefined

  return (
    <>
      <section aria-labelledby="members-title">
        <h2 id="members-title">Members</h2>
        <div class="filters">
          <label for="member-search">Search by name or email</label>
          <input
            id="member-search"
            type="search"
            value={search}
            data-settled={shown}
            onInput={(e) => setSearch(e.currentTarget.value)}
            aria-controls="member-results"
          />
          <label for="member-status">Status</label>
          <select id="member-status" value={status} onChange={(e) => setStatus(e.currentTarget.value as Status | '')}>
            <option value="">All but removed</option>
            {(['active', 'disabled', 'expired', 'removed'] as const).map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
          <label for="member-role">Role</label>
          <select id="member-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role | '')}>
            <option value="">Any role</option>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </div>
        <div id="member-results" aria-busy={shown !== search.trim()}>
          <Show loaded={list}>
            {(page) => (
              <>
                <p id="member-count" role="status">
                  {page.meta.totalCount} {page.meta.totalCount === 1 ? 'member' : 'members'}
                </p>
                {page.data.length === 0 ? (
                  <Empty>No member matches.</Empty>
                ) : (
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Name</th>
                        <th scope="col">Email</th>
                        <th scope="col">Role</th>
                        <th scope="col">Status</th>
                        <th scope="col">Expires</th>
                        <th scope="col">
                          <span class="sr-only">Action</span>
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {page.data.map((m) => (
                        <tr key={m.id}>
                          <td>{m.displayName ?? '—'}</td>
                          <td>{m.email}</td>
                          <td>{m.role}</td>
                          <td>{m.status}</td>
                          <td>{when(m.expiresAt)}</td>
                          <td>
                            {m.status !== 'removed' && (
                              <button type="button" onClick={() => setEditing(m.id)} aria-label={`Manage ${m.email}`}>
                                Manage
                              </button>
                            )}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )}
                {pager(page.nextPageToken)}
              </>
            )}
          </Show>
        </div>
      </section>
      {editing && (
        <EditMember
          key={editing}
          id={editing}
          roles={roles}
          onDone={() => {
            setEditing(null)
            reloadList()
          }}
          onChanged={reloadList}
        />
      )}
      <Invite roles={roles} />
    </>
  )
}

/** One member read with its ETag; every change sends it back as If-Match. */
function EditMember({ id, roles, onDone, onChanged }: { id: string; roles: readonly Role[]; onDone: () => void; onChanged: () => void }) {
  const [loaded, reload] = useLoad(() => withEtag(api.GET('/v1/tenants/current/memberships/{membershipId}', { params: { path: { membershipId: id } } })), [id])
  const [action, guarded, stale] = useVersionedAction(() => {
    reload()
    onChanged()
  })

  return (
    <section aria-labelledby="edit-title" class="panel">
      <Show loaded={loaded}>
        {({ body: { data: m }, etag }) => (
          <>
            <h2 id="edit-title">Manage {m.email}</h2>
            <StaleNotice problem={stale} what="member" />
            <MemberForm
              key={etag}
              member={m}
              roles={roles}
              busy={action.busy}
              onClose={onDone}
              onSave={(change) =>
                guarded(async () => {
                  await must(
                    api.PATCH('/v1/tenants/current/memberships/{membershipId}', {
                      params: { path: { membershipId: id } },
                      headers: { 'if-match': etag },
                      body: change,
                    }),
                  )
                  onDone()
                })
              }
              onRemove={() =>
                guarded(async () => {
                  await must(
                    api.DELETE('/v1/tenants/current/memberships/{membershipId}', { params: { path: { membershipId: id } }, headers: { 'if-match': etag } }),
                  )
                  onDone()
                })
              }
            />
            <ProblemMessage problem={action.problem} />
          </>
        )}
      </Show>
    </section>
  )
}

interface MemberFormProps {
  member: Member
  roles: readonly Role[]
  busy: boolean
  onSave: (change: { role: Role; status: 'active' | 'disabled'; expiresAt?: string | null }) => void
  onRemove: () => void
  onClose: () => void
}

/** The member's role and status as read (remounted with each new ETag), and the removal behind a confirmation. */
function MemberForm({ member, roles, busy, onSave, onRemove, onClose }: MemberFormProps) {
  const [role, setRole] = useState<Role>(member.role)
  const [status, setStatus] = useState<'active' | 'disabled'>(member.status === 'disabled' ? 'disabled' : 'active')
  const [confirming, setConfirming] = useState(false)
  const readExpiry = member.expiresAt?.slice(0, 10) ?? ''
  const [expires, setExpires] = useState(readExpiry)
  const save = (e: Event) => {
    e.preventDefault()
    // The expiry is sent only when changed: a date input holds no time, and re-sending would move it.
    const expiry = expires === readExpiry ? {} : { expiresAt: expires ? new Date(`${expires}T23:59:59`).toISOString() : null }
    onSave({ role, status, ...expiry })
  }
  return (
    <>
      <form onSubmit={save}>
        <label for="edit-role">Role</label>
        <select id="edit-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          {[...new Set([member.role, ...roles])].map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <label for="edit-status">Status</label>
        <select id="edit-status" value={status} onChange={(e) => setStatus(e.currentTarget.value as 'active' | 'disabled')}>
          <option value="active">active</option>
          <option value="disabled">disabled</option>
        </select>
        <label for="edit-expires">Membership expires on (empty: never)</label>
        <input id="edit-expires" type="date" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          Save
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </form>
      {confirming ? (
        <p>
          Remove {member.email} from this tenant? Their sessions leave it and their keys for it are revoked.{' '}
          <button type="button" class="danger" onClick={onRemove} disabled={busy}>
            Confirm removal
          </button>{' '}
          <button type="button" onClick={() => setConfirming(false)}>
            Keep
          </button>
        </p>
      ) : (
        <p>
          <button type="button" class="danger" onClick={() => setConfirming(true)}>
            Remove member
          </button>
        </p>
      )}
    </>
  )
}

function Invite({ roles }: { roles: readonly Role[] }) {
  const [action, run] = useAction()
  const [pending, reload] = useLoad(() => must(api.GET('/v1/tenant-invitations', { params: { query: { pageSize: 50 } } })), [])
  const [sent, setSent] = useState('')
  const [role, setRole] = useState<Role>(roles.includes('viewer') ? 'viewer' : roles[0]!)

  const invite = (e: Event) => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const data = new FormData(form)
    return run(async () => {
      const { data: inv } = await must(api.POST('/v1/tenant-invitations', { body: { email: String(data.get('email')), role } }))
      setSent(`Invitation sent to ${inv.email}.`)
      form.reset()
      reload()
    })
  }
  const revoke = (id: string) =>
    run(async () => {
      await must(api.DELETE('/v1/tenant-invitations/{invitationId}', { params: { path: { invitationId: id } } }))
      setSent('')
      reload()
    })

  return (
    <section aria-labelledby="invite-title">
      <h2 id="invite-title">Invite a member</h2>
      <form onSubmit={invite}>
        <label for="invite-email">Email</label>
        <input id="invite-email" name="email" type="email" required maxLength={254} />
        <label for="invite-role">Role</label>
        <select id="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          {roles.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <button type="submit" disabled={action.busy}>
          Send invitation
        </button>
      </form>
      {sent && (
        <p role="status" class="ok">
          {sent}
        </p>
      )}
      <ProblemMessage problem={action.problem} />
      <h3>Pending invitations</h3>
      <Show loaded={pending}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No pending invitation.</Empty>
          ) : (
            <ul id="invitations">
              {page.data.map((i) => (
                <li key={i.id}>
                  {i.email} as {i.role}, until {when(i.expiresAt)}{' '}
                  <button type="button" onClick={() => revoke(i.id)} aria-label={`Revoke the invitation of ${i.email}`}>
                    Revoke
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  )
}
