// My account: the profile, the password, the sessions signed in as me (end one, or every other), the second
// factors (authenticator app, recovery codes, passkeys), the single sign-on identities linked to me, and my data (its
// export, and deleting the account: erase-account.tsx). The profile,
// password and session routes need a membership (tenant:read): without one the page says so instead of offering
// them; second factors and linked identities need none.
import { useState } from 'preact/hooks'
import { api, must } from './api'
import { MyData } from './erase-account'
import type { PageProps } from './page'
import { ProblemMessage } from './problem'
import { SecondFactors } from './second-factors'
import { Empty, Show, useAction, useLoad, when } from './ui'

export function Account({ me, can, reloadMe }: PageProps) {
  if (!can('tenant:read')) {
    return (
      <>
        <section aria-labelledby="profile-title">
          <h2 id="profile-title">Profile</h2>
          <p id="my-email">{me.user.email}</p>
          <p>Create or join a tenant to change your profile, password and sessions here.</p>
        </section>
        <SecondFactors />
        <LinkedIdentities />
        <MyData me={me} reloadMe={reloadMe} />
      </>
    )
  }
  return (
    <>
      <Profile me={me} reloadMe={reloadMe} />
      <Password />
      <SecondFactors />
      <LinkedIdentities />
      <Sessions />
      <MyData me={me} reloadMe={reloadMe} />
    </>
  )
}

/** Identities a tenant's provider asserted for me: a link lets that provider's sign-in reach this account, so each
 *  can be ended here (the provider's next sign-in then needs a new link). */
function LinkedIdentities() {
  const [list, reload] = useLoad(() => must(api.GET('/v1/users/me/sso-identities', { params: { query: { pageSize: 100 } } })), [])
  const [action, run] = useAction()
  const unlink = (identityId: string) =>
    run(async () => {
      await must(api.DELETE('/v1/users/me/sso-identities/{identityId}', { params: { path: { identityId } } }))
      reload()
    })
  return (
    <section aria-labelledby="identities-title">
      <h2 id="identities-title">Linked single sign-on</h2>
      <ProblemMessage problem={action.problem} />
      <Show loaded={list}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No identity provider is linked to your account.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Connection</th>
                  <th scope="col">Your subject there</th>
                  <th scope="col">Linked</th>
                  <th scope="col">
                    <span class="sr-only">Action</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((i) => (
                  <tr key={i.id}>
                    <td>{i.connectionName}</td>
                    <td>
                      <code>{i.subject}</code>
                    </td>
                    <td>{when(i.createdAt)}</td>
                    <td>
                      <button type="button" onClick={() => unlink(i.id)} disabled={action.busy} aria-label={`Unlink ${i.connectionName}`}>
                        Unlink
                      </button>
                    </td>
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

function Profile({ me, reloadMe }: Pick<PageProps, 'me' | 'reloadMe'>) {
  const [action, run] = useAction()
  const [name, setName] = useState(me.user.displayName ?? '')
  const save = (e: Event) => {
    e.preventDefault()
    return run(async () => {
      await must(api.PATCH('/v1/users/me', { body: { displayName: name.trim() || null } }))
      reloadMe()
    })
  }
  return (
    <section aria-labelledby="profile-title">
      <h2 id="profile-title">Profile</h2>
      <p>
        Email: <span id="my-email">{me.user.email}</span>
      </p>
      <form onSubmit={save} class="inline">
        <label for="display-name">Display name</label>
        <input id="display-name" value={name} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" disabled={action.busy}>
          Save name
        </button>
      </form>
      <ProblemMessage problem={action.problem} />
    </section>
  )
}

function Password() {
  const [action, run] = useAction()
  const [done, setDone] = useState(false)
  const change = (e: Event) => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const f = new FormData(form)
    setDone(false)
    return run(async () => {
      await must(
        api.PATCH('/v1/users/me/password', {
          body: { currentPassword: String(f.get('current')), newPassword: String(f.get('next')), endOtherSessions: f.get('others') === 'on' },
        }),
      )
      form.reset()
      setDone(true)
    })
  }
  return (
    <section aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form onSubmit={change}>
        <label for="current-password">Current password</label>
        <input id="current-password" name="current" type="password" autocomplete="current-password" required />
        <label for="next-password">New password</label>
        <input id="next-password" name="next" type="password" autocomplete="new-password" required />
        <label class="check">
          <input type="checkbox" name="others" /> Also sign out my other sessions
        </label>
        <button type="submit" disabled={action.busy}>
          Change password
        </button>
      </form>
      {done && (
        <p role="status" class="ok">
          Password changed.
        </p>
      )}
      <ProblemMessage problem={action.problem} />
    </section>
  )
}

function Sessions() {
  const [list, reload] = useLoad(() => must(api.GET('/v1/users/me/sessions', { params: { query: { pageSize: 100 } } })), [])
  const [action, run] = useAction()

  const end = (sessionId: string) =>
    run(async () => {
      await must(api.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId } } }))
      reload()
    })
  const endOthers = () =>
    run(async () => {
      await must(api.POST('/v1/users/me/other-session-invalidation-requests', {}))
      reload()
    })

  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <ProblemMessage problem={action.problem} />
      <Show loaded={list}>
        {(page) => (
          <>
            <table>
              <thead>
                <tr>
                  <th scope="col">Client</th>
                  <th scope="col">Address</th>
                  <th scope="col">Signed in</th>
                  <th scope="col">Last seen</th>
                  <th scope="col">
                    <span class="sr-only">Action</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((s) => (
                  <tr key={s.id} class={s.current ? 'current' : undefined}>
                    <td>{s.userAgent ?? 'unknown client'}</td>
                    <td>{s.ip ?? '—'}</td>
                    <td>{when(s.createdAt)}</td>
                    <td>{when(s.lastSeenAt)}</td>
                    <td>
                      {s.current ? (
                        'This session'
                      ) : (
                        <button type="button" onClick={() => end(s.id)} disabled={action.busy}>
                          End session
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {page.data.some((s) => !s.current) && (
              <p>
                <button type="button" id="end-others" onClick={endOthers} disabled={action.busy}>
                  End every other session
                </button>
              </p>
            )}
          </>
        )}
      </Show>
    </section>
  )
}
