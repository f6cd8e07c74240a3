// My account: the sessions signed in as me (end one, or every other), and where second factors are managed.
import { api, must } from './api'
import type { PageProps } from './app'
import { ProblemMessage } from './problem'
import { Show, useAction, useLoad, when } from './ui'

export function Account({ me }: PageProps) {
  const [list, reload] = useLoad(() => must(api.GET('/v1/users/me/sessions', { params: { query: { pageSize: 100 } } })), [])
  const [action, run] = useAction()

  const end = (sessionId: string) => run(async () => {
    await must(api.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId } } }))
    reload()
  })
  const endOthers = () => run(async () => {
    await must(api.POST('/v1/users/me/other-session-invalidation-requests', {}))
    reload()
  })

  return (
    <>
      <section aria-labelledby="profile-title">
        <h2 id="profile-title">Profile</h2>
        <dl>
          <dt>Email</dt><dd id="my-email">{me.user.email}</dd>
          <dt>Display name</dt><dd>{me.user.displayName ?? '—'}</dd>
        </dl>
        <p>Second factors (authenticator app, passkeys) and your password: <a href="/account">account page</a>.</p>
      </section>
      <section aria-labelledby="sessions-title">
        <h2 id="sessions-title">Sessions</h2>
        <ProblemMessage problem={action.problem} />
        <Show loaded={list}>
          {(page) => (
            <>
              <table>
                <thead><tr><th scope="col">Client</th><th scope="col">Address</th><th scope="col">Signed in</th><th scope="col">Last seen</th><th scope="col"><span class="sr-only">Action</span></th></tr></thead>
                <tbody>
                  {page.data.map((s) => (
                    <tr key={s.id} class={s.current ? 'current' : undefined}>
                      <td>{s.userAgent ?? 'unknown client'}</td><td>{s.ip ?? '—'}</td><td>{when(s.createdAt)}</td><td>{when(s.lastSeenAt)}</td>
                      <td>{s.current ? 'This session' : <button type="button" onClick={() => end(s.id)} disabled={action.busy}>End session</button>}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {page.data.some((s) => !s.current) && <p><button type="button" id="end-others" onClick={endOthers} disabled={action.busy}>End every other session</button></p>}
            </>
          )}
        </Show>
      </section>
    </>
  )
}
