// Shared by the model tests: a tenant with ready storage and a model-writing token, uploads through the
// presigned URLs the API hands out, and waits on a version's status.
import { createHash } from 'node:crypto'
import type { Client } from '../support/client'
import { patFor, tenantOwner } from '../support/fixtures'
import { eventually } from '../support/temporal'
import { provisionedTenant } from '../storage/helpers'

export const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex')

/** A tenant owner (no storage) with a model:read + model:write token. */
export async function modelWriter(base: string) {
  const owner = await tenantOwner(base)
  return { ...owner, pat: owner.client.withBearer((await patFor(owner.client, ['model:read', 'model:write'])).token) }
}

export async function modelTenant(base: string) {
  const owner = await provisionedTenant(base)
  const pat = owner.client.withBearer((await patFor(owner.client, ['model:read', 'model:write'])).token)
  return { ...owner, pat, general: owner.buckets.bucket!.name }
}

/** PUTs each body through the version's presigned URLs with plain fetch: no credentials of ours. */
export async function uploadThroughUrls(pat: Client, versionId: string, bodies: Record<string, Uint8Array | string>) {
  const res = await pat.post(`/model-versions/${versionId}/upload-urls`)
  if (res.status !== 200) throw new Error(`upload-urls: ${res.status} ${res.text}`)
  for (const u of res.json.data.uploads as { key: string; url: string }[]) {
    if (!(u.key in bodies)) continue
    const put = await fetch(u.url, { method: 'PUT', body: bodies[u.key] as BodyInit })
    if (!put.ok) throw new Error(`PUT ${u.key}: ${put.status} ${await put.text()}`)
  }
  return res.json.data
}

export const settled = (pat: Client, versionId: string, timeoutMs = 30_000) =>
  eventually(
    `model version ${versionId} to settle`,
    async () => {
      const v = (await pat.get(`/model-versions/${versionId}`)).json.data
      return ['ready', 'failed'].includes(v?.status) ? v : undefined
    },
    timeoutMs,
  )
