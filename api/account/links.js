// Landing page of the links the API mails: password reset, account activation and registration (the tenant
// invitation link opens the console: api/console/ui/invitation.tsx).
// It reads the path and the token from the address, shows one form, and calls /v1 with JSON. Text goes into the
// DOM with textContent only.

const $ = (id) => document.getElementById(id)
const token = new URLSearchParams(location.search).get('token') ?? ''

const KINDS = {
  '/password-reset': {
    heading: 'Choose a new password', intro: 'Set a new password for your account. Every session of the account is ended.',
    submit: 'Set the password', names: false,
    send: (password) => api('POST', '/password-resets/confirmations', { token, newPassword: password }),
    done: 'Your password was changed. Sign in with the new one.',
  },
  '/activate': {
    heading: 'Activate your account', intro: 'Choose the password of your new account.',
    submit: 'Activate', names: false,
    send: (password) => api('POST', '/password-resets/confirmations', { token, newPassword: password }),
    done: 'Your account is active. Sign in with your new password.',
  },
  '/registration': {
    heading: 'Finish registering', intro: 'Choose a password to create your account.',
    submit: 'Create the account', names: true,
    prepare: async () => {
      const { data } = await api('GET', `/registration-invitations/validation?token=${encodeURIComponent(token)}`)
      if (!data) throw new Error('This registration link is not valid any more: ask for a new one.')
      $('intro').textContent = `Choose a password to create the account of ${data.email}.`
    },
    send: async (password, displayName) => {
      const answer = await api('POST', '/registration-invitations/completions', { token, password, ...(displayName ? { displayName } : {}) })
      window.sessionStorage.setItem('csrf', answer.data.session.csrfToken) // the account page of this tab uses the session
    },
    done: 'Your account was created and you are signed in.',
  },
}

function say(message, ok = false) {
  $('status').textContent = message
  $('status').className = ok ? 'ok' : ''
}

/** JSON against /v1; a failure throws the problem's message (and field details) with its code. */
async function api(method, path, body) {
  const headers = { accept: 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const csrf = window.sessionStorage.getItem('csrf')
  if (csrf && method !== 'GET') headers['x-csrf-token'] = csrf
  const res = await fetch(`/v1${path}`, {
    method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body),
  })
  const json = res.status === 204 ? null : await res.json().catch(() => null)
  if (!res.ok) {
    const details = (json?.errors ?? []).map((e) => `${e.path}: ${e.message}`).join('; ')
    const err = new Error((json?.message ?? `The server answered ${res.status}`) + (details ? ` (${details})` : ''))
    err.code = json?.code
    throw err
  }
  return json
}

function finish(message) {
  $('link-form').hidden = true
  $('done').hidden = false
  say(message, true)
}

function busy(button, on) {
  button.disabled = on
}

async function main() {
  const kind = KINDS[location.pathname.replace(/\/+$/, '')]
  if (!kind) {
    $('heading').textContent = 'Unknown link'
    return
  }
  document.title = `${kind.heading} · Robot Control Plane`
  $('heading').textContent = kind.heading
  $('intro').textContent = kind.intro
  $('link-submit').textContent = kind.submit
  $('display-name-label').hidden = !kind.names
  if (!token) return say('This link has no token: open the link from the mail again.')
  try {
    if (kind.prepare) await kind.prepare()
  } catch (err) {
    return say(err.message)
  }
  $('link-form').hidden = false

  $('link-form').addEventListener('submit', async (event) => {
    event.preventDefault()
    const password = $('new-password').value
    if (password !== $('confirm-password').value) return say('The two passwords differ.')
    busy($('link-submit'), true)
    say('')
    try {
      await kind.send(password, $('display-name').value.trim())
      finish(kind.done)
    } catch (err) {
      say(err.message)
    } finally {
      busy($('link-submit'), false)
    }
  })
}

main()
