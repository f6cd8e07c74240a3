// Offboarding the current tenant (owners only): the open request's state, the end of its retention window, the export
// (its progress, then its download links) and what would block a new request; start it (after signing in again when
// the session is older than five minutes) or cancel it while the window runs. None open is the API's 404
// OFFBOARDING_REQUEST_NOT_FOUND, shown as the tenant being active.
import { useState } from 'preact/hooks'
import { api, must } from './api'
import type { components } from './api-types.gen'
import type { PageProps } from './page'
import { asProblem, ProblemMessage } from './problem'
import { Reauthenticate, useReauthenticated } from './reauth'
import { Show, useAction, useLoad, usePoll, when } from './ui'

type Request = components['schemas']['OffboardingRequestDto']

async function current(): Promise<Request | null> {
  try {
    return (await must(api.GET('/v1/tenants/current/offboarding'))).data
  } catch (err) {
    const problem = asProblem(err)
    if (problem.status === 404 && problem.code === 'OFFBOARDING_REQUEST_NOT_FOUND') return null
    throw problem
  }
}

export function Offboarding({ me }: PageProps) {
  const [loaded, reload] = useLoad(current, [])
  usePoll(loaded.state === 'ready' && loaded.value?.export.status === 'pending', reload)
  const tenant = me.currentMembership!.tenantName
  return (
    <Show loaded={loaded}>
      {(request) => (request ? <OpenRequest request={request} onChanged={reload} /> : <Start me={me} tenant={tenant} onStarted={reload} />)}
    </Show>
  )
}

function Start({ me, tenant, onStarted }: { me: PageProps['me']; tenant: string; onStarted: () => void }) {
  const sudo = useReauthenticated()
  const [confirming, setConfirming] = useState(false)
  const start = () =>
    sudo.run(async () => {
      await must(api.POST('/v1/tenants/current/offboarding', {}))
      onStarted()
    })
  return (
    <section aria-labelledby="offboarding-start-title">
      <h2 id="offboarding-start-title">{tenant} is active</h2>
      <p>
        Offboarding stops every new piece of work in this tenant (builds, uploads, new members, keys and endpoints), exports all of its data to its export
        bucket with a signed manifest, and mails the owners the links. When the retention window ends the tenant can be deleted; until then it can be cancelled
        and everything works again.
      </p>
      {sudo.pending ? (
        <Reauthenticate me={me} asked={sudo.asked} onDone={() => sudo.run(sudo.pending!)} onCancel={sudo.cancel} />
      ) : confirming ? (
        <p>
          Offboard {tenant}?{' '}
          <button type="button" class="danger" onClick={start} disabled={sudo.action.busy}>
            Confirm: start offboarding
          </button>{' '}
          <button type="button" onClick={() => setConfirming(false)}>
            Keep it active
          </button>
        </p>
      ) : (
        <p>
          <button type="button" class="danger" onClick={() => setConfirming(true)}>
            Start offboarding
          </button>
        </p>
      )}
      <ProblemMessage problem={sudo.action.problem} />
    </section>
  )
}

const STATE: Record<Request['state'], string> = {
  open: 'Offboarding: the retention window runs; cancelling makes the tenant active again',
  window_elapsed: 'The retention window has ended: the tenant may be deleted',
}

function OpenRequest({ request: r, onChanged }: { request: Request; onChanged: () => void }) {
  const [action, run] = useAction()
  const cancel = () =>
    run(async () => {
      await must(api.DELETE('/v1/tenants/current/offboarding', {}))
      onChanged()
    })
  return (
    <>
      <section aria-labelledby="offboarding-title">
        <h2 id="offboarding-title">Offboarding request</h2>
        <dl>
          <dt>State</dt>
          <dd id="offboarding-state">{STATE[r.state]}</dd>
          <dt>Requested</dt>
          <dd>{when(r.createdAt)}</dd>
          <dt>Retention window ends</dt>
          <dd id="offboarding-window">
            {when(r.windowEndsAt)} ({r.retentionDays} days)
          </dd>
        </dl>
        {r.state === 'open' && (
          <p>
            <button type="button" onClick={cancel} disabled={action.busy}>
              Cancel offboarding
            </button>
          </p>
        )}
        <ProblemMessage problem={action.problem} />
      </section>
      <Export export={r.export} />
      <section aria-labelledby="blockers-title">
        <h2 id="blockers-title">Blockers</h2>
        {r.blockers.length === 0 ? (
          <p class="empty">Nothing would block a new request today.</p>
        ) : (
          <ul id="offboarding-blockers">
            {r.blockers.map((b) => (
              <li key={b.code}>
                {b.message} <span class="code">({b.code})</span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  )
}

function Export({ export: x }: { export: Request['export'] }) {
  return (
    <section aria-labelledby="export-title">
      <h2 id="export-title">Export</h2>
      {x.status === 'pending' && (
        <p role="status" id="export-status">
          Exporting every row and listing every object…
        </p>
      )}
      {x.status === 'failed' && (
        <div class="problem" role="alert">
          <p>The export failed: {x.error}</p>
        </div>
      )}
      {x.status === 'ready' && (
        <>
          <p role="status" id="export-status">
            Ready {when(x.readyAt)}: {x.rows} rows, {x.objects} objects. Manifest SHA-256 <code>{x.manifestSha256}</code>
          </p>
          {x.download && (
            <>
              <ul id="export-links">
                <li>
                  <a href={x.download.rows} download>
                    Rows (gzip NDJSON)
                  </a>
                </li>
                <li>
                  <a href={x.download.objects} download>
                    Object manifest (gzip NDJSON)
                  </a>
                </li>
                <li>
                  <a href={x.download.manifest} download>
                    Signed manifest (DSSE)
                  </a>
                </li>
              </ul>
              <p>These links work until {when(x.download.expiresAt)}; reload the page for fresh ones.</p>
            </>
          )}
        </>
      )}
    </section>
  )
}
