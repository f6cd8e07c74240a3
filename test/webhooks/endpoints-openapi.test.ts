// The event catalogue as client generators see it: the OpenAPI 3.1 document's top-level `webhooks`, one POST per
// type, whose body is the envelope with that type's `data` schema and whose headers are the Standard Webhooks ones.
import { describe, expect, test } from 'bun:test'
import { z } from 'zod'
import { eventCatalogue, eventTypes } from '../../api/events/catalogue'
import { useApi } from '../support/api'

const api = useApi()
const documentOf = async () => (await fetch(`${api.url}/v1/openapi.json`)).json() as Promise<any>

describe('webhooks in /v1/openapi.json', () => {
  test('every catalogue type, and nothing else, with the envelope and its data schema', async () => {
    const doc = await documentOf()
    expect(doc.openapi).toMatch(/^3\.1\./)
    expect(Object.keys(doc.webhooks).sort()).toEqual([...eventTypes].sort())
    for (const type of eventTypes) {
      const op = doc.webhooks[type].post
      const body = op.requestBody.content['application/json'].schema
      expect({ type, required: body.required }).toEqual({ type, required: ['id', 'type', 'timestamp', 'tenantId', 'data'] })
      expect(body.properties.type).toEqual({ type: 'string', const: type })
      const { $schema: _, ...expected } = z.toJSONSchema(eventCatalogue[type].data, { target: 'draft-2020-12' }) as Record<string, unknown>
      expect({ type, data: body.properties.data }).toEqual({ type, data: expected })
      expect(op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual([
        'header:webhook-id',
        'header:webhook-timestamp',
        'header:webhook-signature',
      ])
      expect(Object.keys(op.responses)).toEqual(['2XX'])
    }
  })

  test("a producer's data, as the catalogue parses it, matches the published schema field for field", async () => {
    const doc = await documentOf()
    const data = doc.webhooks['storage_reconciliation.completed'].post.requestBody.content['application/json'].schema.properties.data
    expect(Object.keys(data.properties).sort()).toEqual(['errorCode', 'jobId', 'missing', 'objectsScanned', 'orphans', 'status'])
    expect(data.properties.status.enum).toEqual(['succeeded', 'failed'])
  })

  test('the registration operations are in paths with their models; the secret only in the two answers that give it', async () => {
    const doc = await documentOf()
    expect(Object.keys(doc.paths['/v1/webhook-endpoints']).sort()).toEqual(['get', 'post'])
    expect(Object.keys(doc.paths['/v1/webhook-endpoints/{endpointId}']).sort()).toEqual(['delete', 'get', 'patch'])
    expect(doc.paths['/v1/webhook-endpoints/{endpointId}/secret-rotations'].post.responses['201']).toBeDefined()
    const schemas = doc.components.schemas
    expect(schemas.CreateWebhookEndpointResponseDto.properties.secret).toBeDefined()
    expect(schemas.WebhookSecretRotationDto.properties.secret).toBeDefined()
    expect(schemas.WebhookEndpointDto.properties.secret).toBeUndefined()
    expect(JSON.stringify(schemas.WebhookEndpointDto)).not.toContain('whsec_')
  })
})
