// The mailed invitation link (/invitations/accept?token=…) opens the console here. Signed in, the account accepts
// with its session (and the session moves to the tenant when its policy admits it); a new address chooses its
// password (and a display name) and is signed in; an address that has an account signs in first, second factor
// included, then accepts. The token is read from the address and never stored.
import { useState } from 'preact/hooks'
import { api, csrf, must } from './api'
import type { Me } from './page'
import { asProblem, ProblemMessage } from './problem'
import { SignIn } from './sign-in'
import { useAction } from './ui'

export const INVITATION_PATH = '/invitations/accept'

/** The token of the invitation link this page was opened from, or null for any other address. */
export const invitationToken = (): string | null =>
  location.pathname.replace(/\/+$/, '') === INVITATION_PATH ? (new URLSearchParams(location.search).get('token') ?? '') : null

interface Props {
  token: string
  me: Me | null
  onSignedIn: () => void
  onAccepted: () => void
}

export function AcceptInvitation({ token, me, onSignedIn, onAccepted }: Props) {
  const [mustSignIn, setMustSignIn] = useState(false)
  const [action, run] = useAction()

  if (!me && mustSignIn) return <SignIn onSignedIn={onSignedIn} title="Sign in to accept your invitation" />

  const acceptAsMe = () =>
    run(async () => {
      await must(api.POST('/v1/tenant-invitations/acceptance-records', { body: { token } }))
      onAccepted()
    })
  const useOtherAccount = () =>
    run(async () => {
      await api.DELETE('/v1/sessions/current').catch(() => undefined)
      csrf.clear()
      onSignedIn()
    })
  const acceptAsNew = (e: Event) => {
    e.preventDefault()
    const f = new FormData(e.currentTarget as HTMLFormElement)
    const password = String(f.get('password'))
    const displayName = String(f.get('name')).trim()
    return run(async () => {
      if (password !== String(f.get('confirm'))) throw new Error('The two passwords differ.')
      try {
        const { data } = await must(
          api.POST('/v1/tenant-invitations/acceptance-records', { body: { token, password, ...(displayName ? { displayName } : {}) } }),
        )
        if ('session' in data && data.session) csrf.set((data.session as { csrfToken: string }).csrfToken)
      } catch (err) {
        // The address has an account: it signs in, then accepts.
        if (asProblem(err).status === 401) {
          setMustSignIn(true)
          return
        }
        throw err
      }
      onAccepted()
    })
  }

  return (
    <main class="narrow">
      <h1>Accept the invitation</h1>
      {!token ? (
        <p class="problem" role="alert">
          This link has no token: open the link from the mail again.
        </p>
      ) : me ? (
        <section aria-labelledby="accept-title">
          <h2 id="accept-title">Join with this account</h2>
          <p>
            You are signed in as <strong id="invited-as">{me.user.email}</strong>. The invitation must be for this address.
          </p>
          <div class="actions">
            <button type="button" onClick={acceptAsMe} disabled={action.busy}>
              Accept the invitation
            </button>
            <button type="button" onClick={useOtherAccount} disabled={action.busy}>
              Use another account
            </button>
          </div>
        </section>
      ) : (
        <section aria-labelledby="accept-title">
          <h2 id="accept-title">Create your account</h2>
          <p>Choose a password to create your account and join the organisation.</p>
          <form onSubmit={acceptAsNew}>
            <label for="invite-name">Display name (optional)</label>
            <input id="invite-name" name="name" maxLength={200} autocomplete="name" />
            <label for="invite-password">Password</label>
            <input id="invite-password" name="password" type="password" autocomplete="new-password" required />
            <label for="invite-confirm">Password again</label>
            <input id="invite-confirm" name="confirm" type="password" autocomplete="new-password" required />
            <button type="submit" disabled={action.busy}>
              Accept the invitation
            </button>
          </form>
          <p>
            <button type="button" class="link" onClick={() => setMustSignIn(true)}>
              I already have an account: sign in
            </button>
          </p>
        </section>
      )}
      <ProblemMessage problem={action.problem} />
    </main>
  )
}
