import { Client } from './client'

let n = 0
export const uniqueEmail = (tag = 'user') => `${tag}-${Date.now().toString(36)}-${++n}-${Math.random().toString(36).slice(2, 6)}@example.test`
export const uniqueSlug = (tag = 't') => `${tag}-${Date.now().toString(36)}-${++n}${Math.random().toString(36).slice(2, 6)}`
export const PASSWORD = 'correct horse battery staple'

/** A registered, signed-in user (cookie session) — everything through the public API. */
export async function signedUpUser(base: string, email = uniqueEmail()) {
  const client = new Client(base)
  const res = await client.post('/users', { email, password: PASSWORD })
  if (res.status !== 201) throw new Error(`registration failed: ${res.status} ${res.text}`)
  return { client, email, userId: res.json.data.user.id as string }
}

/** A user who owns a fresh tenant; the session is switched to it. */
export async function tenantOwner(base: string) {
  const u = await signedUpUser(base)
  const res = await u.client.post('/tenants', { name: 'Test tenant', slug: uniqueSlug() })
  if (res.status !== 201) throw new Error(`tenant creation failed: ${res.status} ${res.text}`)
  return { ...u, tenantId: res.json.data.tenant.id as string, membershipId: res.json.data.membership.id as string }
}

export async function patFor(client: Client, scopes: string[], extra: Record<string, unknown> = {}) {
  const res = await client.post('/api-keys', { name: 'test token', scopes, ...extra })
  if (res.status !== 201) throw new Error(`PAT creation failed: ${res.status} ${res.text}`)
  return { token: res.json.data.token as string, id: res.json.data.apiKey.id as string }
}
