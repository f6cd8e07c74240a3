// The hosted account page: plain DOM and fetch against /v1 with the session cookie. The CSRF token of the session
// is kept in sessionStorage (it is answered at sign-in); the session token itself stays in the HttpOnly cookie.

const $ = (id) => document.getElementById(id)
const { startAuthentication, startRegistration } = window.SimpleWebAuthnBrowser
const store = window.sessionStorage

function say(message, ok = false) {
  $('status').textContent = message
  $('status').className = ok ? 'ok' : ''
}

async function api(method, path, body) {
  const headers = { accept: 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const csrf = store.getItem('csrf')
  if (csrf && method !== 'GET') headers['x-csrf-token'] = csrf
  const res = await fetch(`/v1${path}`, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) })
  const json = res.status === 204 ? null : await res.json().catch(() => null)
  if (!res.ok) {
    const details = (json?.errors ?? []).map((e) => `${e.path}: ${e.message}`).join('; ')
    const err = new Error((json?.message ?? `${method} ${path} answered ${res.status}`) + (details ? ` (${details})` : ''))
    err.code = json?.code
    err.status = res.status
    throw err
  }
  return json
}

function show(section) {
  for (const id of ['sign-in', 'challenge', 'account']) $(id).hidden = id !== section
}

/** After any sign-in answer: the session is live, gated by a challenge, or gated until a factor is enrolled. */
async function afterSignIn(data) {
  store.setItem('csrf', data.session.csrfToken)
  if (data.session.state === 'mfa_required') {
    store.setItem('challenge', JSON.stringify(data.session.mfaChallenge))
    return showChallenge()
  }
  store.removeItem('challenge')
  return showAccount()
}

function showChallenge() {
  const challenge = JSON.parse(store.getItem('challenge') ?? 'null')
  if (!challenge) return showSignIn()
  $('challenge-passkey').hidden = !challenge.methods.includes('webauthn')
  $('code-form').hidden = !challenge.methods.includes('totp')
  show('challenge')
}

function showSignIn() {
  store.removeItem('csrf')
  store.removeItem('challenge')
  show('sign-in')
}

async function confirmChallenge(answer) {
  const challenge = JSON.parse(store.getItem('challenge'))
  await api('POST', '/sessions/mfa-challenges/confirmations', { challengeId: challenge.id, ...answer })
  store.removeItem('challenge')
  say('Second factor accepted.', true)
  await showAccount()
}

async function showAccount() {
  let me
  try {
    me = (await api('GET', '/users/me')).data
  } catch (err) {
    if (err.code === 'MFA_REQUIRED' && store.getItem('challenge')) return showChallenge()
    if (err.code !== 'MFA_REQUIRED') return showSignIn()
    me = null // held at the enrolment gate: only the second-factor routes answer
  }
  $('who').textContent = me?.user.email ?? 'a member who must enrol a second factor'
  $('enrolment-note').hidden = me !== null
  show('account')
  await Promise.all([renderMfa(), renderPasskeys(), renderSessions()])
}

async function renderMfa() {
  const mfa = (await api('GET', '/users/me/mfa')).data
  $('totp-state').textContent = mfa.totp.status === 'active'
    ? `Active; ${mfa.recoveryCodesRemaining} recovery codes left.` : 'Not set up.'
  $('totp-start').hidden = mfa.totp.status === 'active'
}

async function renderPasskeys() {
  let res
  try { res = await api('GET', '/users/me/webauthn/credentials?pageSize=100') } catch { return $('passkeys').replaceChildren() }
  // Built first and swapped in at once, so the list is never seen half-drawn.
  $('passkeys').replaceChildren(...res.data.map((c) => {
    const li = document.createElement('li')
    li.textContent = `${c.name ?? 'Passkey'} · added ${new Date(c.createdAt).toLocaleString()} `
    const remove = document.createElement('button')
    remove.textContent = 'Remove'
    remove.onclick = () => run(async () => { await api('DELETE', `/users/me/webauthn/credentials/${c.id}`); await renderPasskeys() })
    li.append(remove)
    return li
  }))
}

async function renderSessions() {
  let res
  try { res = await api('GET', '/users/me/sessions?pageSize=100') } catch (err) {
    $('sessions').textContent = err.message
    return
  }
  $('sessions').replaceChildren(...res.data.map((s) => {
    const li = document.createElement('li')
    li.className = 'session'
    li.textContent = `${s.userAgent ?? 'unknown client'} · ${s.ip ?? ''} · last seen ${new Date(s.lastSeenAt).toLocaleString()} `
    if (s.current) {
      li.append('(this session)')
    } else {
      const revoke = document.createElement('button')
      revoke.textContent = 'Sign out'
      revoke.onclick = () => run(async () => { await api('DELETE', `/sessions/${s.id}`); await renderSessions() })
      li.append(revoke)
    }
    return li
  }))
}

/** Runs a UI action, reporting its failure instead of throwing into the void. */
async function run(action) {
  try {
    await action()
  } catch (err) {
    say(err.message)
  }
}

$('password-form').onsubmit = (e) => {
  e.preventDefault()
  run(async () => {
    const res = await api('POST', '/sessions', { email: $('email').value, password: $('password').value })
    $('password').value = ''
    say('')
    await afterSignIn(res.data)
  })
}

$('passkey-sign-in').onclick = () => run(async () => {
  const { options } = (await api('POST', '/sessions/passkey-challenges')).data
  const assertion = await startAuthentication({ optionsJSON: options })
  const res = await api('POST', '/sessions', { assertion })
  say('Signed in with a passkey.', true)
  await afterSignIn(res.data)
})

$('code-form').onsubmit = (e) => {
  e.preventDefault()
  run(async () => {
    const code = $('mfa-code').value.trim()
    $('mfa-code').value = ''
    await confirmChallenge(/^\d{6}$/.test(code) ? { method: 'totp', code } : { method: 'recovery_code', code })
  })
}

$('challenge-passkey').onclick = () => run(async () => {
  const challenge = JSON.parse(store.getItem('challenge'))
  const assertion = await startAuthentication({ optionsJSON: challenge.webauthn })
  await confirmChallenge({ method: 'webauthn', assertion })
})

$('sign-out').onclick = () => run(async () => {
  await api('DELETE', '/sessions/current').catch(() => {})
  showSignIn()
  say('Signed out.', true)
})

$('totp-start').onclick = () => run(async () => {
  const t = (await api('POST', '/users/me/mfa/totp')).data
  $('totp-qr').src = t.qrCodeDataUrl
  $('totp-secret').textContent = t.secret
  $('totp-enrol').hidden = false
})

$('totp-verify-form').onsubmit = (e) => {
  e.preventDefault()
  run(async () => {
    const { recoveryCodes } = (await api('POST', '/users/me/mfa/totp/verifications', { code: $('totp-code').value.trim() })).data
    $('totp-enrol').hidden = true
    $('recovery-codes').replaceChildren(...recoveryCodes.map((c) => Object.assign(document.createElement('li'), { textContent: c })))
    $('recovery').hidden = false
    say('Authenticator app activated.', true)
    await showAccount()
  })
}

$('passkey-register').onclick = () => run(async () => {
  const options = (await api('POST', '/users/me/webauthn/registration-options')).data
  const response = await startRegistration({ optionsJSON: options })
  await api('POST', '/users/me/webauthn/registrations', { name: $('passkey-name').value.trim() || undefined, response })
  say('Passkey added.', true)
  await showAccount()
})

if (store.getItem('challenge')) showChallenge()
else showAccount()
