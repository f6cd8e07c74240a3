// The second factors of the signed-in account: an authenticator app (TOTP: the QR code and secret shown while
// enrolling, confirmed with a code; the recovery codes shown once), and passkeys (added through the browser's
// WebAuthn ceremony, listed, removed). Used by the account page and by the sign-in page when a tenant requires a
// second factor before anything else (those routes answer a session held at that gate).
import { startRegistration } from '@simplewebauthn/browser'
import { useState } from 'preact/hooks'
import { api, must } from './api'
import type { components } from './api-types.gen'
import { ProblemMessage } from './problem'
import { CopyButton, Empty, Show, useAction, useLoad, when } from './ui'

type TotpStart = components['schemas']['TotpEnrollmentStartDto']

export function SecondFactors({ onChange }: { onChange?: () => void }) {
  const [status, reload] = useLoad(() => must(api.GET('/v1/users/me/mfa')).then((r) => r.data), [])
  const changed = () => {
    reload()
    onChange?.()
  }
  return (
    <>
      <section aria-labelledby="totp-title">
        <h2 id="totp-title">Authenticator app</h2>
        <Show loaded={status}>
          {(s) => <Totp active={s.totp.status === 'active'} since={s.totp.activatedAt} codesLeft={s.recoveryCodesRemaining} onChange={changed} />}
        </Show>
      </section>
      <Passkeys onChange={changed} />
    </>
  )
}

function Totp({ active, since, codesLeft, onChange }: { active: boolean; since: string | null; codesLeft: number; onChange: () => void }) {
  const [action, run] = useAction()
  const [enrolling, setEnrolling] = useState<TotpStart | null>(null)
  const [codes, setCodes] = useState<string[] | null>(null)

  const start = () => run(async () => setEnrolling((await must(api.POST('/v1/users/me/mfa/totp', {}))).data))
  const confirm = (e: Event) => {
    e.preventDefault()
    const code = String(new FormData(e.currentTarget as HTMLFormElement).get('code')).trim()
    return run(async () => {
      const { data } = await must(api.POST('/v1/users/me/mfa/totp/verifications', { body: { code } }))
      setEnrolling(null)
      setCodes(data.recoveryCodes)
      onChange()
    })
  }
  const remove = (e: Event) => {
    e.preventDefault()
    const code = String(new FormData(e.currentTarget as HTMLFormElement).get('code')).trim()
    return run(async () => {
      await must(api.DELETE('/v1/users/me/mfa/totp', { body: { reauthenticationCode: code } }))
      onChange()
    })
  }

  return (
    <>
      {codes && (
        <div class="secret" role="region" aria-label="Recovery codes">
          <p>
            <strong>Your recovery codes: keep them somewhere safe. They are shown once and never again; each works once in place of a code.</strong>
          </p>
          <ul id="recovery-codes">
            {codes.map((c) => (
              <li key={c}>
                <code>{c}</code>
              </li>
            ))}
          </ul>
          <CopyButton value={codes.join('\n')} label="Copy the recovery codes" />{' '}
          <button type="button" onClick={() => setCodes(null)}>
            Done
          </button>
        </div>
      )}
      {active ? (
        <>
          <p id="totp-state">
            Active since {when(since)}; {codesLeft} recovery codes left.
          </p>
          <form onSubmit={remove} class="inline">
            <label for="totp-remove-code">A current code or a recovery code</label>
            <input id="totp-remove-code" name="code" autocomplete="one-time-code" required maxLength={64} />
            <button type="submit" class="danger" disabled={action.busy}>
              Remove the authenticator app
            </button>
          </form>
        </>
      ) : enrolling ? (
        <div class="panel">
          <p>Scan the QR code with your authenticator app, or type the secret into it. Both are shown only while you set it up.</p>
          <img id="totp-qr" src={enrolling.qrCodeDataUrl} width={240} height={240} alt="QR code of the authenticator app secret" />
          <p>
            Secret: <code id="totp-secret">{enrolling.secret}</code>
          </p>
          <form onSubmit={confirm} class="inline">
            <label for="totp-code">Code from the app ({enrolling.digits} digits)</label>
            <input id="totp-code" name="code" inputMode="numeric" autocomplete="one-time-code" required pattern="\d{6}" />
            <button type="submit" disabled={action.busy}>
              Confirm
            </button>
          </form>
        </div>
      ) : (
        <>
          <p id="totp-state">Not set up.</p>
          <button type="button" onClick={start} disabled={action.busy}>
            Set up an authenticator app
          </button>
        </>
      )}
      <ProblemMessage problem={action.problem} />
    </>
  )
}

function Passkeys({ onChange }: { onChange: () => void }) {
  const [list, reload] = useLoad(() => must(api.GET('/v1/users/me/webauthn/credentials', { params: { query: { pageSize: 100 } } })), [])
  const [action, run] = useAction()
  const [name, setName] = useState('')
  const changed = () => {
    reload()
    onChange()
  }

  const add = (e: Event) => {
    e.preventDefault()
    return run(async () => {
      const { data: options } = await must(api.POST('/v1/users/me/webauthn/registration-options', {}))
      const response = await startRegistration({ optionsJSON: options as never })
      await must(api.POST('/v1/users/me/webauthn/registrations', { body: { name: name.trim() || undefined, response: response as never } }))
      setName('')
      changed()
    })
  }
  const remove = (credentialId: string) =>
    run(async () => {
      await must(api.DELETE('/v1/users/me/webauthn/credentials/{credentialId}', { params: { path: { credentialId } } }))
      changed()
    })

  return (
    <section aria-labelledby="passkeys-title">
      <h2 id="passkeys-title">Passkeys</h2>
      <Show loaded={list}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No passkey yet.</Empty>
          ) : (
            <table id="passkeys">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Added</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span class="sr-only">Action</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((c) => (
                  <tr key={c.id}>
                    <td>{c.name ?? 'Passkey'}</td>
                    <td>{when(c.createdAt)}</td>
                    <td>{when(c.lastUsedAt)}</td>
                    <td>
                      <button
                        type="button"
                        class="danger"
                        onClick={() => remove(c.id)}
                        disabled={action.busy}
                        aria-label={`Remove passkey ${c.name ?? ''}`.trim()}
                      >
                        Remove
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Show>
      <form onSubmit={add} class="inline">
        <label for="passkey-name">Name of the new passkey</label>
        <input id="passkey-name" value={name} maxLength={100} onInput={(e) => setName(e.currentTarget.value)} />
        <button type="submit" disabled={action.busy}>
          Add a passkey
        </button>
      </form>
      <ProblemMessage problem={action.problem} />
    </section>
  )
}
