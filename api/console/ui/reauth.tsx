// Sudo mode for the console: offboarding a tenant and erasing an account need a session that proved its user's
// presence within the last five minutes (the API answers 403 FORBIDDEN otherwise, and says so). When it does, the
// action waits while the person signs in again (the password, then the code of their authenticator app or a recovery
// code when the account asks for one): a new session, moved back to the tenant shown, the old one ended; then the
// action runs again. An account without a password (passkey or single sign-on only) signs out and in instead.
import { useCallback, useState } from 'preact/hooks'
import { api, csrf, must } from './api'
import type { components } from './api-types.gen'
import type { Me } from './page'
import { asProblem, type Problem, ProblemMessage } from './problem'
import { useAction } from './ui'

type Challenge = components['schemas']['MfaChallengeDto']

/** The API's own refusal for a session that has not proven itself recently (not a role's lack: that is PERMISSION_DENIED). */
const needsFreshSignIn = (p: Problem) => p.status === 403 && p.code === 'FORBIDDEN'

export function useReauthenticated(): {
  action: { busy: boolean; problem: Problem | null }
  run: (act: () => Promise<void>) => Promise<void>
  pending: (() => Promise<void>) | null
  asked: Problem | null
  cancel: () => void
} {
  const [action, run] = useAction()
  const [pending, setPending] = useState<{ act: () => Promise<void>; asked: Problem } | null>(null)
  const guarded = useCallback(
    (act: () => Promise<void>) =>
      run(async () => {
        try {
          await act()
          setPending(null)
        } catch (err) {
          const problem = asProblem(err)
          if (!needsFreshSignIn(problem)) throw problem
          setPending({ act, asked: problem })
        }
      }),
    [run],
  )
  return { action, run: guarded, pending: pending?.act ?? null, asked: pending?.asked ?? null, cancel: () => setPending(null) }
}

/** Signs in again as `me`, in the tenant shown, and hands the fresh session to `onDone`. */
export function Reauthenticate({ me, asked, onDone, onCancel }: { me: Me; asked: Problem | null; onDone: () => void; onCancel: () => void }) {
  const [action, run] = useAction()
  const [challenge, setChallenge] = useState<{ id: string; methods: Challenge['methods']; old: string } | null>(null)

  // The session the person was in is ended once the new one stands in the same tenant: one session per sign-in.
  const settle = async (old: string) => {
    const membership = me.currentMembership
    if (membership) await must(api.POST('/v1/sessions/current-membership-switches', { body: { membershipId: membership.id } }))
    await must(api.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId: old } } }))
    onDone()
  }

  const signIn = (e: Event) => {
    e.preventDefault()
    const password = String(new FormData(e.currentTarget as HTMLFormElement).get('password'))
    return run(async () => {
      const old = (await must(api.GET('/v1/sessions/current'))).data.id
      const { data } = await must(api.POST('/v1/sessions', { body: { email: me.user.email, password } }))
      csrf.set(data.session.csrfToken)
      if (data.session.state === 'mfa_required' && data.session.mfaChallenge) {
        setChallenge({ id: data.session.mfaChallenge.id, methods: data.session.mfaChallenge.methods, old })
        return
      }
      await settle(old)
    })
  }

  const confirm = (e: Event) => {
    e.preventDefault()
    const code = String(new FormData(e.currentTarget as HTMLFormElement).get('code')).trim()
    return run(async () => {
      const answer = /^\d{6}$/.test(code) ? { method: 'totp' as const, code } : { method: 'recovery_code' as const, code }
      await must(api.POST('/v1/sessions/mfa-challenges/confirmations', { body: { challengeId: challenge!.id, ...answer } }))
      await settle(challenge!.old)
    })
  }

  return (
    <div class="panel" role="region" aria-label="Confirm it is you">
      <p>
        <strong>Confirm it is you.</strong> {asked?.message}
      </p>
      {challenge ? (
        <form onSubmit={confirm}>
          <label for="reauth-code">Code from your authenticator app, or a recovery code</label>
          <input id="reauth-code" name="code" autocomplete="one-time-code" required />
          <button type="submit" disabled={action.busy}>
            Confirm
          </button>
        </form>
      ) : (
        <form onSubmit={signIn}>
          <label for="reauth-password">Your password</label>
          <input id="reauth-password" name="password" type="password" autocomplete="current-password" required />
          <button type="submit" disabled={action.busy}>
            Sign in again and continue
          </button>
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
        </form>
      )}
      <p>Without a password (a passkey or single sign-on only), sign out and sign in again, then come back within five minutes.</p>
      <ProblemMessage problem={action.problem} />
    </div>
  )
}
