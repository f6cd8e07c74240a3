// Security of the current tenant: the sign-in policy (edited with its ETag), the domains it claims (the TXT record
// to publish, and a verify button), and its single sign-on connections with the redirect URI to paste into the
// provider and a test sign-in.
import { useState } from 'preact/hooks'
import { api, must, withEtag } from './api'
import type { PageProps } from './page'
import type { components } from './api-types.gen'
import { ProblemMessage } from './problem'
import { CopyButton, Empty, Show, StaleNotice, useAction, useLoad, useVersionedAction, when } from './ui'

type Policy = components['schemas']['TenantAuthPolicyDto']
type Method = Policy['allowedSignInMethods'][number]
type SsoRole = components['schemas']['CreateTenantSsoConnectionRequestDto']['defaultRole']
const METHODS: Method[] = ['password', 'passkey', 'sso']
const SSO_ROLES: SsoRole[] = ['viewer', 'researcher', 'billing_admin', 'admin']
const CALLBACK = `${location.origin}/v1/auth/sso/callback`

const domainList = (value: FormDataEntryValue | null) =>
  String(value ?? '')
    .split(/[\s,]+/)
    .map((d) => d.trim().toLowerCase())
    .filter(Boolean)

export function Security(_: PageProps) {
  return (
    <>
      <AuthPolicy />
      <Domains />
      <SsoConnections />
    </>
  )
}

function AuthPolicy() {
  const [loaded, reload] = useLoad(() => withEtag(api.GET('/v1/tenants/current/auth-policy')), [])
  const [action, guarded, stale] = useVersionedAction(reload)
  const [saved, setSaved] = useState(false)
  return (
    <section aria-labelledby="policy-title">
      <h2 id="policy-title">Sign-in policy</h2>
      <StaleNotice problem={stale} what="policy" />
      <Show loaded={loaded}>
        {({ body: { data: p }, etag }) => {
          const save = (e: Event) => {
            e.preventDefault()
            const f = new FormData(e.currentTarget as HTMLFormElement)
            setSaved(false)
            return guarded(async () => {
              await must(
                api.PATCH('/v1/tenants/current/auth-policy', {
                  headers: { 'if-match': etag },
                  body: {
                    mfaRequired: f.get('mfa') === 'on',
                    ssoEnforced: f.get('sso') === 'on',
                    allowedSignInMethods: f.getAll('methods').map(String) as Method[],
                    passwordMinLength: Number(f.get('minLength')),
                    sessionAbsoluteMinutes: Number(f.get('absolute')),
                    sessionIdleMinutes: Number(f.get('idle')),
                    allowedEmailDomains: domainList(f.get('domains')),
                  },
                }),
              )
              setSaved(true)
              reload()
            })
          }
          return (
            <form onSubmit={save} key={etag}>
              <label class="check">
                <input type="checkbox" name="mfa" defaultChecked={p.mfaRequired} /> Members must use a second factor
              </label>
              <label class="check">
                <input type="checkbox" name="sso" defaultChecked={p.ssoEnforced} /> Members must sign in through single sign-on
              </label>
              <fieldset>
                <legend>Sign-in methods allowed</legend>
                {METHODS.map((m) => (
                  <label key={m} class="check">
                    <input type="checkbox" name="methods" value={m} defaultChecked={p.allowedSignInMethods.includes(m)} /> {m}
                  </label>
                ))}
              </fieldset>
              <label for="policy-min">Shortest password (8 to 64)</label>
              <input id="policy-min" name="minLength" type="number" min={8} max={64} required defaultValue={String(p.passwordMinLength)} />
              <label for="policy-absolute">Session lifetime, minutes</label>
              <input id="policy-absolute" name="absolute" type="number" min={5} required defaultValue={String(p.sessionAbsoluteMinutes)} />
              <label for="policy-idle">Idle timeout, minutes</label>
              <input id="policy-idle" name="idle" type="number" min={5} required defaultValue={String(p.sessionIdleMinutes)} />
              <label for="policy-domains">New members' email domains (space or comma separated; empty: any)</label>
              <input id="policy-domains" name="domains" defaultValue={p.allowedEmailDomains.join(', ')} />
              <button type="submit" disabled={action.busy}>
                Save policy
              </button>
              {saved && (
                <p role="status" class="ok">
                  Policy saved.
                </p>
              )}
              <p class="empty">{p.updatedAt ? `Last changed ${when(p.updatedAt)}.` : 'The defaults: never changed.'}</p>
            </form>
          )
        }}
      </Show>
      <ProblemMessage problem={action.problem} />
    </section>
  )
}

function Domains() {
  const [list, reload] = useLoad(() => must(api.GET('/v1/tenants/current/domains', { params: { query: { pageSize: 100 } } })), [])
  const [action, run] = useAction()
  const add = (e: Event) => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const domain = String(new FormData(form).get('domain')).trim().toLowerCase()
    return run(async () => {
      await must(api.POST('/v1/tenants/current/domains', { body: { domain } }))
      form.reset()
      reload()
    })
  }
  const verify = (domainId: string) =>
    run(async () => {
      await must(api.POST('/v1/tenants/current/domains/{domainId}/verifications', { params: { path: { domainId } } }))
      reload()
    })
  const remove = (domainId: string) =>
    run(async () => {
      await must(api.DELETE('/v1/tenants/current/domains/{domainId}', { params: { path: { domainId } } }))
      reload()
    })
  return (
    <section aria-labelledby="domains-title">
      <h2 id="domains-title">Domains</h2>
      <Show loaded={list}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No domain claimed.</Empty>
          ) : (
            <ul class="domains">
              {page.data.map((d) => (
                <li key={d.id}>
                  <p>
                    <strong>{d.domain}</strong>: {d.status === 'verified' ? `verified ${when(d.verifiedAt)}` : 'waiting for its DNS record'}
                  </p>
                  {d.status === 'pending' && (
                    <p>
                      Publish a {d.verificationRecord.type} record at <code>{d.verificationRecord.name}</code> with the value{' '}
                      <code>{d.verificationRecord.value}</code> <CopyButton value={d.verificationRecord.value} label={`Copy the record of ${d.domain}`} />{' '}
                      <button type="button" onClick={() => verify(d.id)} disabled={action.busy} aria-label={`Verify ${d.domain}`}>
                        Verify
                      </button>
                    </p>
                  )}
                  <button type="button" class="danger" onClick={() => remove(d.id)} disabled={action.busy} aria-label={`Remove ${d.domain}`}>
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
      <ProblemMessage problem={action.problem} />
      <form onSubmit={add} class="inline">
        <label for="domain-name">Domain</label>
        <input id="domain-name" name="domain" required maxLength={253} />
        <button type="submit" disabled={action.busy}>
          Claim domain
        </button>
      </form>
    </section>
  )
}

function SsoConnections() {
  const [list, reload] = useLoad(() => must(api.GET('/v1/tenants/current/sso-connections', { params: { query: { pageSize: 100 } } })), [])
  const [action, run] = useAction()
  const [created, setCreated] = useState<string | null>(null)
  const create = (e: Event) => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const f = new FormData(form)
    return run(async () => {
      const { data } = await must(
        api.POST('/v1/tenants/current/sso-connections', {
          body: {
            protocol: 'oidc',
            name: String(f.get('name')),
            issuer: String(f.get('issuer')),
            clientId: String(f.get('clientId')),
            clientSecret: String(f.get('clientSecret')),
            emailDomains: domainList(f.get('domains')),
            defaultRole: f.get('role') as SsoRole,
            enabled: true,
          },
        }),
      )
      form.reset()
      setCreated(data.name)
      reload()
    })
  }
  return (
    <section aria-labelledby="sso-title">
      <h2 id="sso-title">Single sign-on</h2>
      <ol class="steps">
        <li>
          At your OpenID provider, register an application with this redirect URI: <code id="redirect-uri">{CALLBACK}</code>{' '}
          <CopyButton value={CALLBACK} label="Copy the redirect URI" />
        </li>
        <li>Enter its issuer, client id and client secret below.</li>
        <li>
          Use the connection's test sign-in: it goes to the provider and back. Signing in there with your own address, of a domain verified above, links your
          account to the provider (My account lists it); another address signs in as that person's account, or a new one.
        </li>
      </ol>
      <Show loaded={list}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No connection yet.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Issuer</th>
                  <th scope="col">Domains</th>
                  <th scope="col">New members</th>
                  <th scope="col">State</th>
                  <th scope="col">
                    <span class="sr-only">Test</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((c) => (
                  <tr key={c.id}>
                    <td>{c.name}</td>
                    <td>
                      <code>{c.issuer}</code>
                    </td>
                    <td>{c.emailDomains.join(', ') || 'any'}</td>
                    <td>{c.defaultRole}</td>
                    <td>{c.enabled ? 'enabled' : 'disabled'}</td>
                    <td>
                      <a href={`${c.signInUrl}?returnTo=${encodeURIComponent('/console')}`} aria-label={`Test sign-in with ${c.name}`}>
                        Test sign-in
                      </a>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Show>
      {created && (
        <p role="status" class="ok">
          Connection {created} added.
        </p>
      )}
      <ProblemMessage problem={action.problem} />
      <h3>Add a connection</h3>
      <form onSubmit={create}>
        <label for="sso-name">Name</label>
        <input id="sso-name" name="name" required maxLength={200} />
        <label for="sso-issuer">Issuer URL</label>
        <input id="sso-issuer" name="issuer" type="url" required />
        <label for="sso-client">Client id</label>
        <input id="sso-client" name="clientId" required />
        <label for="sso-secret">Client secret</label>
        <input id="sso-secret" name="clientSecret" type="password" autocomplete="off" required />
        <label for="sso-domains">Email domains that may join (empty: any)</label>
        <input id="sso-domains" name="domains" />
        <label for="sso-role">Role of members who join through it</label>
        <select id="sso-role" name="role">
          {SSO_ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <button type="submit" disabled={action.busy}>
          Add connection
        </button>
      </form>
    </section>
  )
}
