// A leaked read-only token (model:read) reads models and packages but changes nothing: every model-writing route
// refuses it with 403 before it looks at the resource, so it cannot even learn which ids exist.
import { describe, expect, test } from 'bun:test'
import { randomUUID } from 'node:crypto'
import { useApi } from '../support/api'
import { patFor, tenantOwner } from '../support/fixtures'

const api = useApi()

describe('a model:read token', () => {
  test('is refused by every route that writes models, versions, jobs, packages or runs', async () => {
    const owner = await tenantOwner(api.url)
    const reader = owner.client.withBearer((await patFor(owner.client, ['model:read'])).token)
    const id = randomUUID()
    const writes: [string, string, unknown?][] = [
      ['post', '/embodiment-profiles', {}],
      ['patch', `/embodiment-profiles/${id}`, {}],
      ['delete', `/embodiment-profiles/${id}`],
      ['post', '/training-jobs', { name: 'x' }],
      ['post', `/training-jobs/${id}/completion`, { status: 'failed' }],
      ['post', '/model-versions', {}],
      ['post', `/model-versions/${id}/upload-urls`],
      ['post', `/model-versions/${id}/validations`],
      ['post', `/model-versions/${id}/edge-inference-package`, { embodimentProfileId: id, mode: 'local' }],
      ['post', `/edge-inference-packages/${id}/runs`, {}],
    ]
    for (const [method, path, body] of writes) {
      const res = await (reader as any)[method](path, body)
      expect({ route: `${method} ${path}`, status: res.status, code: res.json?.code }).toEqual({
        route: `${method} ${path}`,
        status: 403,
        // Its member's role would allow the writes: the token does not declare model:write.
        code: 'PERMISSION_NOT_DECLARED',
      })
    }
    for (const path of ['/embodiment-profiles', '/training-jobs', '/model-versions', '/edge-inference-packages']) {
      expect({ path, status: (await reader.get(path)).status }).toEqual({ path, status: 200 })
    }
  })
})
