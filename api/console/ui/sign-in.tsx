// Sign in with a password (then the second factor when the account has one: a code, a recovery code or a passkey),
// with a passkey alone, or through the tenant's single sign-on (the login options for the address); enrol a second
// factor when the tenant requires one first; create an account; ask for a password reset link.
import type { ComponentChildren } from 'preact'
import { startAuthentication } from '@simplewebauthn/browser'
import { useState } from 'preact/hooks'
import { api, csrf, must } from './api'
import type { components } from './api-types.gen'
import { type Problem, ProblemMessage } from './problem'
import { SecondFactors } from './second-factors'
import { Show, useAction, useLoad } from './ui'

type Challenge = components['schemas']['MfaChallengeDto']

type Mode = 'sign-in' | 'register' | 'forgot'

export function SignIn({ onSignedIn, title = 'Robot Control Plane console' }: { onSignedIn: () => void; title?: string }) {
  const [challenge, setChallenge] = useState<Challenge | null>(null)
  const [mustEnrol, setMustEnrol] = useState(false)
  const [mode, setMode] = useState<Mode>('sign-in')
  const [sent, setSent] = useState('')
  const [action, run] = useAction()
  const [email, setEmail] = useState('')
  const [options] = useLoad(
    () => must(api.GET('/v1/auth/login-options', { params: { query: email.includes('@') ? { email } : {} } })).then((r) => r.data),
    [email],
  )

  const register = (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    return run(async () => {
      const { data } = await must(api.POST('/v1/users', { body: { email: String(form.get('email')), password: String(form.get('password')) } }))
      if (!('session' in data)) throw new Error('The platform answered a provisioning result to a registration')
      csrf.set(data.session.csrfToken)
      onSignedIn()
    })
  }

  const forgot = (e: Event) => {
    e.preventDefault()
    const email = String(new FormData(e.currentTarget as HTMLFormElement).get('email'))
    return run(async () => {
      await must(api.POST('/v1/password-resets', { body: { email } }))
      setSent(`If ${email} has an account, a link to choose a new password is on its way.`)
    })
  }
  const switchTo = (m: Mode) => () => {
    setMode(m)
    setSent('')
  }

  const signIn = (e: Event) => {
    e.preventDefault()
    const form = new FormData(e.currentTarget as HTMLFormElement)
    return run(async () => {
      const { data } = await must(api.POST('/v1/sessions', { body: { email: String(form.get('email')), password: String(form.get('password')) } }))
      csrf.set(data.session.csrfToken)
      if (data.session.state === 'mfa_required' && data.session.mfaChallenge) setChallenge(data.session.mfaChallenge)
      else if (data.session.state === 'mfa_enrolment_required') setMustEnrol(true)
      else onSignedIn()
    })
  }

  const withPasskey = () =>
    run(async () => {
      const { data } = await must(api.POST('/v1/sessions/passkey-challenges', {}))
      const assertion = await startAuthentication({ optionsJSON: data.options as never })
      const signedIn = await must(api.POST('/v1/sessions', { body: { assertion: assertion as never } }))
      csrf.set(signedIn.data.session.csrfToken)
      onSignedIn()
    })

  const passkeyAnswer = () =>
    run(async () => {
      const assertion = await startAuthentication({ optionsJSON: challenge!.webauthn as never })
      await must(
        api.POST('/v1/sessions/mfa-challenges/confirmations', { body: { challengeId: challenge!.id, method: 'webauthn', assertion: assertion as never } }),
      )
      onSignedIn()
    })

  const confirm = (e: Event) => {
    e.preventDefault()
    const code = String(new FormData(e.currentTarget as HTMLFormElement).get('code')).trim()
    return run(async () => {
      const answer = /^\d{6}$/.test(code) ? { method: 'totp' as const, code } : { method: 'recovery_code' as const, code }
      await must(api.POST('/v1/sessions/mfa-challenges/confirmations', { body: { challengeId: challenge!.id, ...answer } }))
      onSignedIn()
    })
  }

  return (
    <main class="narrow">
      <h1>{title}</h1>
      {mustEnrol ? (
        <Step id="enrol" title="A second factor is required" problem={null}>
          <p>Your organisation requires a second factor: set up an authenticator app or add a passkey, then continue.</p>
          <SecondFactors />
          <p>
            <button type="button" onClick={onSignedIn}>
              Continue
            </button>
          </p>
        </Step>
      ) : challenge ? (
        <Step id="challenge" title="Second factor" problem={action.problem}>
          {challenge.methods.includes('webauthn') && challenge.webauthn && (
            <p>
              <button type="button" onClick={passkeyAnswer} disabled={action.busy}>
                Use a passkey
              </button>
            </p>
          )}
          {challenge.methods.some((m) => m === 'totp' || m === 'recovery_code') && (
            <form onSubmit={confirm}>
              <label for="mfa-code">{challenge.methods.includes('totp') ? 'Code from your authenticator app, or a recovery code' : 'A recovery code'}</label>
              <input id="mfa-code" name="code" autocomplete="one-time-code" required />
              <button type="submit" disabled={action.busy}>
                Confirm
              </button>
            </form>
          )}
        </Step>
      ) : mode === 'register' ? (
        <Step id="register" title="Create an account" problem={action.problem}>
          <form onSubmit={register}>
            <Credentials prefix="new-" fresh submit="Create account" busy={action.busy} />
          </form>
          <p>
            <button type="button" class="link" onClick={switchTo('sign-in')}>
              I have an account: sign in
            </button>
          </p>
        </Step>
      ) : mode === 'forgot' ? (
        <Step id="forgot" title="Forgot your password" problem={action.problem}>
          <form onSubmit={forgot}>
            <EmailField id="reset-email" />
            <button type="submit" disabled={action.busy}>
              Send me a link
            </button>
          </form>
          {sent && (
            <p role="status" class="ok">
              {sent}
            </p>
          )}
          <p>
            <button type="button" class="link" onClick={switchTo('sign-in')}>
              Back to sign in
            </button>
          </p>
        </Step>
      ) : (
        <Step id="sign-in" title="Sign in" problem={action.problem}>
          <form onSubmit={signIn}>
            <Credentials prefix="" submit="Sign in" busy={action.busy} onEmail={setEmail} />
          </form>
          <Show loaded={options}>{(o) => <SsoOptions options={o} />}</Show>
          <p>
            <button type="button" class="link" onClick={switchTo('register')}>
              Create an account
            </button>{' '}
            <button type="button" class="link" onClick={switchTo('forgot')}>
              Forgot your password?
            </button>
          </p>
          <p>
            <button type="button" onClick={withPasskey} disabled={action.busy}>
              Sign in with a passkey
            </button>
          </p>
        </Step>
      )}
    </main>
  )
}

function Step({ id, title, problem, children }: { id: string; title: string; problem: Problem | null; children: ComponentChildren }) {
  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      {children}
      <ProblemMessage problem={problem} />
    </section>
  )
}

const EmailField = ({ id, onEmail }: { id: string; onEmail?: (email: string) => void }) => (
  <>
    <label for={id}>Email</label>
    <input
      id={id}
      name="email"
      type="email"
      autocomplete="username"
      required
      maxLength={254}
      onChange={onEmail && ((e) => onEmail(e.currentTarget.value.trim()))}
    />
  </>
)

type LoginOptions = components['schemas']['AuthLoginOptionsDto']

/** The single sign-on connections of the tenants that proved the address's domain; each starts the provider's
 *  sign-in, which comes back to the console with the session cookie. */
function SsoOptions({ options }: { options: LoginOptions }) {
  if (options.sso.length === 0) return null
  return (
    <div class="actions" role="group" aria-label="Single sign-on">
      {options.ssoEnforced && <p>Your organisation signs you in through its identity provider.</p>}
      {options.sso.map((c) => (
        <a key={c.connectionId} class="button" href={`/v1/auth/sso/${encodeURIComponent(c.connectionId)}/start?returnTo=${encodeURIComponent('/console')}`}>
          Sign in with {c.name}
        </a>
      ))}
    </div>
  )
}

/** Email, password and the submit button: a new password for a new account, the current one to sign in. */
function Credentials({
  prefix,
  fresh = false,
  submit,
  busy,
  onEmail,
}: {
  prefix: string
  fresh?: boolean
  submit: string
  busy: boolean
  onEmail?: (email: string) => void
}) {
  return (
    <>
      <EmailField id={`${prefix}email`} onEmail={onEmail} />
      <label for={`${prefix}password`}>Password</label>
      <input id={`${prefix}password`} name="password" type="password" autocomplete={fresh ? 'new-password' : 'current-password'} required />
      <button type="submit" disabled={busy}>
        {submit}
      </button>
    </>
  )
}
