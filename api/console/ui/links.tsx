// The pages of the links the API mails (/console/password-reset, /console/activate, /console/registration, each
// with ?token=…; the old addresses redirect here): choose the password of a reset or of an account an administrator
// created, or finish a registration, which signs the new account in. The tenant invitation's link is invitation.tsx.
// The token is read from the address and never stored; it leaves the address bar once used.
import { useEffect, useState } from 'preact/hooks'
import { api, csrf, must } from './api'
import { ProblemMessage } from './problem'
import { Show, useAction, useLoad } from './ui'

type Kind = 'password-reset' | 'activate' | 'registration'

export interface MailedLink {
  kind: Kind
  token: string
}

const KINDS: Kind[] = ['password-reset', 'activate', 'registration']

/** The mailed link this page was opened from, or null for any other address. */
export function mailedLink(): MailedLink | null {
  const kind = KINDS.find((k) => location.pathname.replace(/\/+$/, '') === `/console/${k}`)
  return kind ? { kind, token: new URLSearchParams(location.search).get('token') ?? '' } : null
}

const HEADING: Record<Kind, string> = { 'password-reset': 'Choose a new password', activate: 'Activate your account', registration: 'Finish registering' }

// The two links that confirm a password grant; registration's page says its own (it names the address).
const GRANT: Record<Exclude<Kind, 'registration'>, { intro: string; submit: string; done: string }> = {
  'password-reset': {
    intro: 'Set a new password for your account. Every session of the account is ended.',
    submit: 'Set the password',
    done: 'Your password was changed. Sign in with the new one.',
  },
  activate: {
    intro: 'Choose the password of your new account.',
    submit: 'Activate',
    done: 'Your account is active. Sign in with your new password.',
  },
}

/** `onSignedIn`: a finished registration has a session; the console opens with it. */
export function MailedLinkPage({ link, onSignedIn }: { link: MailedLink; onSignedIn: () => void }) {
  const heading = HEADING[link.kind]
  useEffect(() => {
    document.title = `${heading} · Robot Control Plane`
  }, [heading])
  return (
    <main class="narrow">
      <h1>{heading}</h1>
      {!link.token ? (
        <p class="problem" role="alert">
          This link has no token: open the link from the mail again.
        </p>
      ) : link.kind === 'registration' ? (
        <Registration token={link.token} onSignedIn={onSignedIn} />
      ) : (
        <ChoosePassword kind={link.kind} token={link.token} />
      )}
    </main>
  )
}

/** Reset and activation: one grant, confirmed with the new password; the person then signs in with it. */
function ChoosePassword({ kind, token }: { kind: keyof typeof GRANT; token: string }) {
  const text = GRANT[kind]
  const [done, setDone] = useState(false)
  const [action, run] = useAction()
  const choose = (e: Event) => {
    e.preventDefault()
    const { password, differ } = passwordOf(e)
    return run(async () => {
      if (differ) throw new Error('The two passwords differ.')
      await must(api.POST('/v1/password-resets/confirmations', { body: { token, newPassword: password } }))
      history.replaceState(null, '', '/console')
      setDone(true)
    })
  }
  if (done) return <Done message={text.done} next="Sign in" />
  return (
    <section aria-labelledby="link-title">
      <h2 id="link-title">Your password</h2>
      <p>{text.intro}</p>
      <form onSubmit={choose}>
        <PasswordFields />
        <button type="submit" disabled={action.busy}>
          {text.submit}
        </button>
      </form>
      <ProblemMessage problem={action.problem} />
    </section>
  )
}

/** The address the link was mailed to, then the new account's password (and a display name). */
function Registration({ token, onSignedIn }: { token: string; onSignedIn: () => void }) {
  const [valid] = useLoad(() => must(api.GET('/v1/registration-invitations/validation', { params: { query: { token } } })).then((r) => r.data), [token])
  const [action, run] = useAction()
  const register = (e: Event) => {
    e.preventDefault()
    const displayName = String(new FormData(e.currentTarget as HTMLFormElement).get('name')).trim()
    const { password, differ } = passwordOf(e)
    return run(async () => {
      if (differ) throw new Error('The two passwords differ.')
      const { data } = await must(
        api.POST('/v1/registration-invitations/completions', {
          body: { token, password, ...(displayName ? { displayName } : {}) },
        }),
      )
      if (data.session) csrf.set(data.session.csrfToken) // the console also asks the session for it when it loads
      history.replaceState(null, '', '/console') // the console opens on the page a new account starts from
      onSignedIn()
    })
  }
  return (
    <Show loaded={valid}>
      {(invited) =>
        !invited ? (
          <p class="problem" role="alert">
            This registration link is not valid any more: ask for a new one.
          </p>
        ) : (
          <section aria-labelledby="link-title">
            <h2 id="link-title">Your new account</h2>
            <p>
              Choose a password to create the account of <strong id="registering">{invited.email}</strong>.
            </p>
            <form onSubmit={register}>
              <label for="link-name">Display name (optional)</label>
              <input id="link-name" name="name" maxLength={200} autocomplete="name" />
              <PasswordFields />
              <button type="submit" disabled={action.busy}>
                Create the account
              </button>
            </form>
            <ProblemMessage problem={action.problem} />
          </section>
        )
      }
    </Show>
  )
}

const PasswordFields = () => (
  <>
    <label for="link-password">New password</label>
    <input id="link-password" name="password" type="password" autocomplete="new-password" required />
    <label for="link-confirm">Repeat the password</label>
    <input id="link-confirm" name="confirm" type="password" autocomplete="new-password" required />
  </>
)

/** The new password of the submitted form, and whether its repetition differs (the action reports that). */
function passwordOf(e: Event) {
  const f = new FormData(e.currentTarget as HTMLFormElement)
  const password = String(f.get('password'))
  return { password, differ: password !== String(f.get('confirm')) }
}

function Done({ message, next }: { message: string; next: string }) {
  return (
    <section aria-labelledby="done-title">
      <h2 id="done-title">Done</h2>
      <p role="status" class="ok">
        {message}
      </p>
      <p>
        <a class="button" href="/console">
          {next}
        </a>
      </p>
    </section>
  )
}
