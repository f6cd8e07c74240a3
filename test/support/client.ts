import { collectCookie, collectSecrets } from './secrets'

/** A tiny HTTP client that keeps a session cookie and its CSRF token, as a browser would. */
export class Client {
  cookie?: string
  csrf?: string
  bearer?: string

  constructor(readonly base: string) {}

  withBearer(token: string): Client {
    const c = new Client(this.base)
    c.bearer = token
    return c
  }

  async call(method: string, path: string, opts: { body?: unknown; raw?: string; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...opts.headers }
    if (opts.body !== undefined || opts.raw !== undefined) headers['content-type'] ??= 'application/json'
    if (this.bearer) headers.authorization = `Bearer ${this.bearer}`
    if (this.cookie) headers.cookie = this.cookie
    if (this.csrf && method !== 'GET') headers['x-csrf-token'] ??= this.csrf
    const res = await fetch(`${this.base}/v1${path}`, {
      method,
      headers,
      body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
    })
    const setCookie = res.headers.get('set-cookie')
    if (setCookie) this.cookie = setCookie.split(';')[0]
    collectCookie(setCookie)
    collectSecrets(opts.body)
    const text = await res.text()
    let json: any
    try {
      json = text ? JSON.parse(text) : undefined
    } catch {
      /* not JSON: keep the text */
    }
    if (json?.data?.session?.csrfToken) this.csrf = json.data.session.csrfToken
    collectSecrets(json)
    return { status: res.status, headers: res.headers, text, json }
  }

  get = (path: string, headers?: Record<string, string>) => this.call('GET', path, { headers })
  post = (path: string, body?: unknown, headers?: Record<string, string>) => this.call('POST', path, { body, headers })
  patch = (path: string, body?: unknown, headers?: Record<string, string>) => this.call('PATCH', path, { body, headers })
  delete = (path: string, headers?: Record<string, string>) => this.call('DELETE', path, { headers })
}
