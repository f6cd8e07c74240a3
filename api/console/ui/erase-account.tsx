// My own data: the personal export (GDPR Art. 20) as a JSON file, and "delete my account" (Art. 17) with its
// refusals explained: the only owner of a tenant is told which tenants and what to do first; a legal hold is named as
// the reason without more (the API says no more: the hold is confidential). Erasing asks for a recent sign-in.
import { useState } from 'preact/hooks'
import { api, csrf, must } from './api'
import type { PageProps } from './page'
import { ProblemMessage } from './problem'
import { Reauthenticate, useReauthenticated } from './reauth'
import { useAction } from './ui'

/** What a person can do about each refusal; the problem itself (message, tenants named) is shown as the API says it. */
const NEXT_STEP: Record<string, string> = {
  LAST_OWNER_PROTECTION: 'Make another member an owner of each tenant named, or offboard it, then delete your account.',
  LEGAL_HOLD_ACTIVE: 'Your data must be kept while the hold lasts (GDPR Art. 17(3)(e)). Ask the tenant’s owners when it will be released.',
}

export function MyData({ me, reloadMe }: Pick<PageProps, 'me' | 'reloadMe'>) {
  return (
    <>
      <PersonalExport />
      <EraseAccount me={me} reloadMe={reloadMe} />
    </>
  )
}

function PersonalExport() {
  const [action, run] = useAction()
  const [file, setFile] = useState<string | null>(null)
  const download = () =>
    run(async () => {
      const { data } = await must(api.GET('/v1/users/me/export'))
      if (file) URL.revokeObjectURL(file)
      const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }))
      setFile(url)
      // The file is made here from the answer: the page's links and fetches stay on this origin.
      const a = document.createElement('a')
      a.href = url
      a.download = `my-data-${data.exportedAt.slice(0, 10)}.json`
      a.click()
    })
  return (
    <section aria-labelledby="my-data-title">
      <h2 id="my-data-title">My data</h2>
      <p>
        Everything the platform holds about you, as one JSON file: profile, memberships, sessions, keys (never their secrets), second factors and the audit
        entries you acted in.
      </p>
      <button type="button" onClick={download} disabled={action.busy}>
        Download my data
      </button>
      <ProblemMessage problem={action.problem} />
    </section>
  )
}

function EraseAccount({ me, reloadMe }: Pick<PageProps, 'me' | 'reloadMe'>) {
  const sudo = useReauthenticated()
  const [confirming, setConfirming] = useState(false)
  const erase = () =>
    sudo.run(async () => {
      await must(api.DELETE('/v1/users/me', {}))
      csrf.clear()
      reloadMe() // signed out: every session has ended
    })
  const refusal = sudo.action.problem
  return (
    <section aria-labelledby="erase-title">
      <h2 id="erase-title">Delete my account</h2>
      <p>
        Deleting ends every session, revokes every key, removes you from every tenant and erases your profile and second factors. Audit entries keep a
        pseudonym. Your address can register again after 30 days. This cannot be undone.
      </p>
      {sudo.pending ? (
        <Reauthenticate me={me} asked={sudo.asked} onDone={() => sudo.run(sudo.pending!)} onCancel={sudo.cancel} />
      ) : confirming ? (
        <p>
          Delete the account {me.user.email}?{' '}
          <button type="button" class="danger" onClick={erase} disabled={sudo.action.busy}>
            Confirm: delete my account
          </button>{' '}
          <button type="button" onClick={() => setConfirming(false)}>
            Keep my account
          </button>
        </p>
      ) : (
        <p>
          <button type="button" class="danger" onClick={() => setConfirming(true)}>
            Delete my account
          </button>
        </p>
      )}
      <ProblemMessage problem={refusal} />
      {refusal && NEXT_STEP[refusal.code] && (
        <p id="erase-next-step" class="empty">
          {NEXT_STEP[refusal.code]}
        </p>
      )}
    </section>
  )
}
