// The device sign-in page (/console/device?user_code=…, which POST /v1/device/authorizations names): a person signed
// in (factors and the tenant's policy as anywhere) sees which client asks, for which scopes and from where, picks one
// of their tenants and approves, or denies. Signed out, the shell shows the sign-in form first and comes back here.
import { useState } from 'preact/hooks'
import { api, must } from './api'
import type { components } from './api-types.gen'
import type { Me } from './page'
import { ProblemMessage } from './problem'
import { useAction } from './ui'

export const DEVICE_PATH = '/console/device'

/** The user code of the device page's address ('' when it has none), or null on any other page. */
export const deviceUserCode = (): string | null =>
  location.pathname.replace(/\/+$/, '') === DEVICE_PATH ? (new URLSearchParams(location.search).get('user_code') ?? '') : null

type Pending = components['schemas']['DeviceAuthorizationLookupDto']
type Decision = components['schemas']['DeviceAuthorizationDecisionDto']

export function DevicePage({ me, initialCode, onDone }: { me: Me; initialCode: string; onDone: () => void }) {
  const [code, setCode] = useState(initialCode)
  const [pending, setPending] = useState<Pending | null>(null)
  const [decision, setDecision] = useState<Decision | null>(null)
  const active = me.memberships.filter((m) => m.status === 'active')
  const [tenantId, setTenantId] = useState(me.currentMembership?.status === 'active' ? me.currentMembership.tenantId : (active[0]?.tenantId ?? ''))
  const [action, run] = useAction()

  const lookUp = (e: Event) => {
    e.preventDefault()
    return run(async () => {
      const { data } = await must(api.GET('/v1/device/authorizations/lookup', { params: { query: { userCode: code } } }))
      setPending(data)
    })
  }
  const approve = () =>
    run(async () => {
      setDecision((await must(api.POST('/v1/device/authorizations/approve', { body: { userCode: code, tenantId } }))).data)
    })
  const deny = () =>
    run(async () => {
      setDecision((await must(api.POST('/v1/device/authorizations/deny', { body: { userCode: code } }))).data)
    })
  const tenantName = (id: string | null) => active.find((m) => m.tenantId === id)?.tenantName ?? id

  return (
    <main class="narrow">
      <h1>Sign in a device</h1>
      {decision ? (
        <section aria-labelledby="device-done">
          <h2 id="device-done">{decision.status === 'approved' ? 'Device approved' : 'Device denied'}</h2>
          <p role="status">
            {decision.status === 'approved'
              ? `${decision.clientName} receives its token for ${tenantName(decision.tenantId)} on its next poll. You can close this page.`
              : `${decision.clientName} was refused. You can close this page.`}
          </p>
          <button type="button" onClick={onDone}>
            Open the console
          </button>
        </section>
      ) : !pending ? (
        <form onSubmit={lookUp}>
          <p>Enter the code the device shows (it expires 10 minutes after it was shown).</p>
          <label for="device-code">Code</label>
          <input
            id="device-code"
            value={code}
            onInput={(e) => setCode((e.currentTarget as HTMLInputElement).value)}
            autocomplete="off"
            autocapitalize="characters"
            spellcheck={false}
            maxLength={20}
            required
          />
          <button type="submit" disabled={action.busy}>
            Continue
          </button>
        </form>
      ) : (
        <section aria-labelledby="device-ask">
          <h2 id="device-ask">A device asks to act as you</h2>
          <dl>
            <dt>Client</dt>
            <dd id="device-client">{pending.clientName}</dd>
            <dt>Asks for</dt>
            <dd>
              <ul aria-label="Scopes asked for">
                {pending.scopes.map((s) => (
                  <li key={s}>
                    <code>{s}</code>
                  </li>
                ))}
              </ul>
            </dd>
            <dt>From the address</dt>
            <dd id="device-address">{pending.clientAddress ?? 'unknown'}</dd>
            <dt>Asked at</dt>
            <dd>{new Date(pending.createdAt).toLocaleString()}</dd>
          </dl>
          <p>Approve only if you started this sign-in yourself, on a device you trust. Its token acts for 90 days in the tenant you choose.</p>
          {active.length === 0 ? (
            <p class="problem" role="alert">
              You are an active member of no tenant: there is nothing to approve it for.
            </p>
          ) : (
            <>
              <label for="device-tenant">Tenant</label>
              <select id="device-tenant" value={tenantId} onChange={(e) => setTenantId((e.currentTarget as HTMLSelectElement).value)}>
                {active.map((m) => (
                  <option key={m.tenantId} value={m.tenantId}>
                    {m.tenantName} ({m.role})
                  </option>
                ))}
              </select>
            </>
          )}
          <div class="actions">
            <button type="button" onClick={approve} disabled={action.busy || !tenantId}>
              Approve
            </button>
            <button type="button" onClick={deny} disabled={action.busy}>
              Deny
            </button>
          </div>
        </section>
      )}
      <ProblemMessage problem={action.problem} />
    </main>
  )
}
