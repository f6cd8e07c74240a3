// The console's one client of the public /v1 API, typed from our own OpenAPI document (api-types.gen.ts, written by
// scripts/build-console.ts): a changed response shape fails the type check. Same origin, the session cookie, and the
// session's CSRF token as a header on unsafe methods; nothing in localStorage.
import createClient, { type Middleware } from 'openapi-fetch'
import type { paths } from './api-types.gen'
import { Problem } from './problem'

// The CSRF token is answered once, at sign-in. Kept for this tab only, so a finished registration (links.tsx) hands it
// to the console it opens. It is not the credential: the session token stays in its HttpOnly cookie.
const CSRF_KEY = 'csrf'
export const csrf = {
  get: () => sessionStorage.getItem(CSRF_KEY),
  set: (token: string) => sessionStorage.setItem(CSRF_KEY, token),
  clear: () => sessionStorage.removeItem(CSRF_KEY),
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const csrfHeader: Middleware = {
  onRequest({ request }) {
    const token = csrf.get()
    if (token && UNSAFE.has(request.method)) request.headers.set('x-csrf-token', token)
    return request
  },
}

export const api = createClient<paths>({ baseUrl: location.origin, credentials: 'same-origin' })
api.use(csrfHeader)

interface Answer<T> {
  data?: T
  error?: unknown
  response: Response
}

/** The success body of a call (none for a 204), or a Problem (the problem+json the server answered, or the network's failure). */
export async function must<T>(call: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>
  try {
    answer = await call
  } catch {
    throw new Problem({ status: 0, code: 'NETWORK', message: 'The platform could not be reached. Check the connection and try again.' })
  }
  if (!answer.response.ok) throw Problem.from(answer.error, answer.response)
  return answer.data as T // undefined for a 204, whose type says so
}

/** Like must, for a versioned resource: the body and its ETag, to send back as If-Match. */
export async function withEtag<T>(call: Promise<Answer<T>>): Promise<{ body: T; etag: string }> {
  let etag = ''
  const body = await must(
    call.then((a) => {
      etag = a.response.headers.get('etag') ?? ''
      return a
    }),
  )
  return { body, etag }
}
