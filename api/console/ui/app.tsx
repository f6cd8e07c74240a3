// The shell: who is signed in (GET /v1/users/me), the tenant they act in, the pages their role may use, and the
// page the location hash names. What a role cannot do is not offered; the server still decides every request.
import type { ComponentType } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { ROLE_PERMISSIONS, type Permission } from '../../identity/permissions'
import { api, csrf, must } from './api'
import { Problem } from './problem'
import { Show, useLoad } from './ui'
import { SignIn } from './sign-in'
import { Tenants } from './tenants'
import { Members } from './members'
import { ApiKeys } from './api-keys'
import { Webhooks } from './webhooks'
import { Security } from './security'
import { Audit } from './audit'
import { Storage } from './storage'
import { Models } from './models'
import { Packages } from './packages'
import { Account } from './account'
import { Bell, Notifications } from './notifications'
import { Projects } from './projects'
import { Offboarding } from './offboarding'
import { LegalHolds } from './legal-holds'
import { AcceptInvitation, invitationToken } from './invitation'
import { DevicePage, deviceUserCode } from './device'
import { mailedLink, MailedLinkPage } from './links'
import { Usage } from './usage'
import { SubscriptionPage } from './subscription'
import { Invoices } from './invoices'
import { BillingBanner } from './billing-banner'
import type { Me, PageProps } from './page'

interface PageDef {
  path: string
  title: string
  needs: Permission | 'tenant' | 'owner' | null
  view: ComponentType<PageProps>
}

const PAGES: PageDef[] = [
  { path: 'tenants', title: 'Tenants', needs: null, view: Tenants },
  { path: 'members', title: 'Members', needs: 'tenant:manage', view: Members },
  { path: 'projects', title: 'Projects', needs: 'tenant:read', view: Projects },
  { path: 'api-keys', title: 'API keys', needs: 'tenant', view: ApiKeys },
  { path: 'models', title: 'Models', needs: 'model:read', view: Models },
  { path: 'packages', title: 'Packages', needs: 'model:read', view: Packages },
  { path: 'storage', title: 'Storage', needs: 'tenant', view: Storage },
  { path: 'security', title: 'Security', needs: 'tenant:manage', view: Security },
  { path: 'webhooks', title: 'Webhooks', needs: 'tenant:manage', view: Webhooks },
  { path: 'audit', title: 'Audit log', needs: 'tenant:manage', view: Audit },
  { path: 'usage', title: 'Usage', needs: 'billing:read', view: Usage },
  { path: 'subscription', title: 'Subscription', needs: 'billing:read', view: SubscriptionPage },
  { path: 'invoices', title: 'Invoices', needs: 'billing:read', view: Invoices },
  { path: 'legal-holds', title: 'Legal holds', needs: 'legal_hold:manage', view: LegalHolds },
  // The role, not a point: the API refuses offboarding to anyone but an owner, whatever their points.
  { path: 'offboarding', title: 'Offboarding', needs: 'owner', view: Offboarding },
  { path: 'account', title: 'My account', needs: null, view: Account },
  { path: 'notifications', title: 'Notifications', needs: null, view: Notifications },
]

const routeOf = () => location.hash.replace(/^#\/?/, '').split('/')[0] ?? ''

function useRoute(): string {
  const [route, setRoute] = useState(routeOf)
  useEffect(() => {
    const onHash = () => setRoute(routeOf())
    addEventListener('hashchange', onHash)
    return () => removeEventListener('hashchange', onHash)
  }, [])
  return route
}

/** Signed out (null) when the browser has no session. Every load asks the cookie's session for its CSRF token: the
 *  token this tab kept may be another session's (a single sign-on redirect replaces the cookie of a signed-in tab;
 *  another tab signs in as someone else), and a stale one would refuse every change. The session and the account are
 *  asked at once, so the console is usable a round trip sooner; when the session is refused, the account's answer
 *  is not read. */
async function whoAmI(): Promise<Me | null> {
  const [session, me] = await Promise.allSettled([must(api.GET('/v1/sessions/current')), must(api.GET('/v1/users/me'))])
  if (session.status === 'rejected') {
    if (session.reason instanceof Problem && (session.reason.status === 401 || session.reason.status === 403)) return null
    throw session.reason
  }
  csrf.set(session.value.data.csrfToken)
  if (me.status === 'rejected') {
    if (me.reason instanceof Problem && me.reason.status === 401) {
      csrf.clear()
      return null
    }
    throw me.reason
  }
  return me.value.data
}

export function App() {
  const [me, reloadMe] = useLoad(whoAmI, [])
  const route = useRoute()
  const [invitation, setInvitation] = useState(invitationToken)
  const [link, setLink] = useState(mailedLink)
  const [device, setDevice] = useState(deviceUserCode)
  const accepted = () => {
    history.replaceState(null, '', '/console#/api-keys') // the token leaves the address bar
    setInvitation(null)
    reloadMe()
  }
  // A mailed link's page needs no session: it shows at once, whoever the tab is signed in as.
  if (link)
    return (
      <MailedLinkPage
        link={link}
        onSignedIn={() => {
          setLink(null)
          reloadMe()
        }}
      />
    )
  return (
    <Show loaded={me}>
      {(who) =>
        invitation !== null ? (
          <AcceptInvitation token={invitation} me={who} onSignedIn={reloadMe} onAccepted={accepted} />
        ) : device !== null ? (
          // Signed out: the sign-in form first (second factors and the tenant's policy as anywhere), then this page.
          who ? (
            <DevicePage
              me={who}
              initialCode={device}
              onDone={() => {
                history.replaceState(null, '', '/console')
                setDevice(null)
              }}
            />
          ) : (
            <SignIn onSignedIn={reloadMe} title="Sign in to approve a device" />
          )
        ) : who ? (
          <Console me={who} route={route} reloadMe={reloadMe} />
        ) : (
          <SignIn onSignedIn={reloadMe} />
        )
      }
    </Show>
  )
}

function Console({ me, route, reloadMe }: { me: Me; route: string; reloadMe: () => void }) {
  const role = me.currentMembership?.role
  const held = new Set<Permission>(role ? ROLE_PERMISSIONS[role] : [])
  const can = (p: Permission) => held.has(p)
  const offers = (needs: PageDef['needs']) => needs === null || (needs === 'tenant' ? role !== undefined : needs === 'owner' ? role === 'owner' : can(needs))
  const offered = PAGES.filter((p) => offers(p.needs))
  const page = offered.find((p) => p.path === route) ?? offered.find((p) => p.path === (role ? 'api-keys' : 'tenants'))!
  const Page = page.view
  useEffect(() => {
    // The location always names the page shown, so a reload (after a tenant switch, say) stays on it.
    if (route !== page.path) location.replace(`#/${page.path}`)
    document.title = `${page.title} · Console · Robot Control Plane`
  }, [page, route])

  const signOut = async () => {
    await api.DELETE('/v1/sessions/current').catch(() => undefined)
    csrf.clear()
    reloadMe()
  }

  return (
    <>
      <header>
        <p class="brand">Robot Control Plane</p>
        <p class="who">
          {me.user.email}
          {me.currentMembership ? (
            <>
              {' '}
              · <span id="current-tenant">{me.currentMembership.tenantName}</span> ({me.currentMembership.role})
            </>
          ) : (
            ' · no tenant chosen'
          )}
        </p>
        <nav aria-label="Console">
          <ul>
            {offered.map((p) => (
              <li key={p.path}>
                <a href={`#/${p.path}`} aria-current={p === page ? 'page' : undefined}>
                  {p.title}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <Bell />
        <button type="button" id="sign-out" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        <BillingBanner me={me} />
        <h1>{page.title}</h1>
        <Page me={me} can={can} reloadMe={reloadMe} />
      </main>
    </>
  )
}
