// The two ways a client authenticates: a bearer token (a personal access token rcp_pat_…, or a session token
// rcp_ses_…), or a cookie session as a browser holds one (the rcp_session cookie, and its CSRF token on writes).
import type { Middleware } from 'openapi-fetch'

export type Auth = { token: string } | { session: SessionJar }

/** Authorization: Bearer on every request. */
export const bearer = (token: string): Middleware => ({
  onRequest({ request }) {
    request.headers.set('Authorization', `Bearer ${token}`)
    return request
  },
})

const COOKIE = 'rcp_session'
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** A session the client keeps from the answers it reads: the cookie a sign-in or registration sets, and the CSRF token
 *  its body carries (data.session.csrfToken). Cleared when the API clears the cookie (sign-out). */
export class SessionJar {
  cookie: string | null = null
  csrfToken: string | null = null

  get signedIn(): boolean {
    return this.cookie !== null
  }

  middleware(): Middleware {
    return {
      onRequest: ({ request }) => {
        if (this.cookie) request.headers.set('Cookie', `${COOKIE}=${this.cookie}`)
        if (this.cookie && this.csrfToken && UNSAFE.has(request.method)) request.headers.set('X-CSRF-Token', this.csrfToken)
        return request
      },
      onResponse: async ({ response }) => {
        for (const line of response.headers.getSetCookie()) {
          const [pair] = line.split(';')
          const at = pair!.indexOf('=')
          if (pair!.slice(0, at).trim() !== COOKIE) continue
          const value = pair!.slice(at + 1).trim()
          this.cookie = value === '' || /max-age=0/i.test(line) ? null : value
          if (!this.cookie) this.csrfToken = null
        }
        if (response.ok && /json/.test(response.headers.get('content-type') ?? '')) {
          const csrf = await response
            .clone()
            .json()
            .then((b: { data?: { session?: { csrfToken?: unknown } } }) => b?.data?.session?.csrfToken)
            .catch(() => undefined)
          if (typeof csrf === 'string') this.csrfToken = csrf
        }
        return undefined
      },
    }
  }
}
