// The bell (the unread count, asked on load and then every 30 seconds, never faster) and the inbox page: the user's
// notifications across tenants, read, unread, archive, and "mark all read" up to the newest one shown.
import { useEffect, useState } from 'preact/hooks'
import { api, must } from './api'
import type { PageProps } from './page'
import { ProblemMessage } from './problem'
import { Empty, Show, useAction, useLoad, usePaging, when } from './ui'

/** How often the bell asks: the unread count is a convenience, not a live feed. */
export const BELL_POLL_MS = 30_000
/** Sent by the inbox page after a change, so the bell answers it at once instead of at its next poll. */
const CHANGED = 'rcp:notifications-changed'
const PAGE_SIZE = 25

type State = 'unread' | 'read' | 'archived'

export function Bell() {
  const [count, reload] = useLoad(() => must(api.GET('/v1/users/me/notifications/count')), [])
  useEffect(() => {
    const t = setInterval(reload, BELL_POLL_MS)
    addEventListener(CHANGED, reload)
    return () => {
      clearInterval(t)
      removeEventListener(CHANGED, reload)
    }
  }, [reload])
  const unread = count.state === 'ready' ? count.value.data.unread : 0
  return (
    <a href="#/notifications" class="bell" id="bell" aria-label={`Notifications: ${unread} unread`}>
      <span aria-hidden="true">🔔</span> {unread > 0 ? <span class="badge">{unread > 99 ? '99+' : unread}</span> : null}
    </a>
  )
}

export function Notifications({ me }: PageProps) {
  const [state, setState] = useState<State | ''>('')
  const { pageToken, pager, restart } = usePaging([state])
  const [list, reload] = useLoad(
    () => must(api.GET('/v1/users/me/notifications', { params: { query: { pageSize: PAGE_SIZE, state: state || undefined, pageToken } } })),
    [state, pageToken],
  )
  const [action, run] = useAction()
  const tenantName = (id: string | null) => (id ? (me.memberships.find((m) => m.tenantId === id)?.tenantName ?? 'another tenant') : 'your account')
  const changed = () => {
    reload()
    dispatchEvent(new Event(CHANGED))
  }
  const change = (notificationId: string, to: 'read' | 'unread' | 'archive') =>
    run(async () => {
      const params = { path: { notificationId } }
      if (to === 'read') await must(api.POST('/v1/users/me/notifications/{notificationId}/read', { params }))
      else if (to === 'unread') await must(api.POST('/v1/users/me/notifications/{notificationId}/unread', { params }))
      else await must(api.POST('/v1/users/me/notifications/{notificationId}/archive', { params }))
      changed()
    })
  const readAll = (upTo: string) =>
    run(async () => {
      await must(api.POST('/v1/users/me/notifications/read-all', { body: { upTo } }))
      restart()
      changed()
    })

  return (
    <section aria-labelledby="inbox-title">
      <h2 id="inbox-title">Your notifications</h2>
      <label>
        Show{' '}
        <select value={state} onChange={(e) => setState((e.currentTarget as HTMLSelectElement).value as State | '')}>
          <option value="">Inbox (unread and read)</option>
          <option value="unread">Unread</option>
          <option value="read">Read</option>
          <option value="archived">Archived</option>
        </select>
      </label>
      <ProblemMessage problem={action.problem} />
      <Show loaded={list}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No notification here.</Empty>
          ) : (
            <>
              {state !== 'archived' && page.data.some((n) => n.state === 'unread') && (
                <p>
                  <button type="button" disabled={action.busy} onClick={() => readAll(page.data[0]!.id)}>
                    Mark all read
                  </button>
                </p>
              )}
              <table>
                <thead>
                  <tr>
                    <th scope="col">What happened</th>
                    <th scope="col">About</th>
                    <th scope="col">When</th>
                    <th scope="col">State</th>
                    <th scope="col">
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((n) => (
                    <tr key={n.id} class={n.state === 'unread' ? 'unread' : undefined}>
                      <td>{n.text}</td>
                      <td>{tenantName(n.tenantId)}</td>
                      <td>{when(n.createdAt)}</td>
                      <td>{n.state}</td>
                      <td>
                        {n.state === 'unread' ? (
                          <button type="button" disabled={action.busy} onClick={() => change(n.id, 'read')} aria-label={`Mark read: ${n.text}`}>
                            Mark read
                          </button>
                        ) : (
                          <button type="button" disabled={action.busy} onClick={() => change(n.id, 'unread')} aria-label={`Mark unread: ${n.text}`}>
                            Mark unread
                          </button>
                        )}{' '}
                        {n.state !== 'archived' && (
                          <button type="button" disabled={action.busy} onClick={() => change(n.id, 'archive')} aria-label={`Archive: ${n.text}`}>
                            Archive
                          </button>
                        )}
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
  )
}
