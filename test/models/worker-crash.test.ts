// Kills the worker in the middle of a validation and starts another: the version turns ready once, with one
// event, and the retried attempt resumes after the objects the first one had measured (its heartbeat).
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { killableWorkers } from '../support/worker-process'
import { modelsWorkflowIds } from '../../workflows/contract-models'
import { eventually } from '../support/temporal'
import { localS3, upload, useApiAndTemporal } from '../storage/helpers'
import { modelTenant, settled, sha256 } from './support'

const OBJECTS = 1000 // the most a bundle may list: long enough a walk to be interrupted
const prefix = `rcp-models-crash-${crypto.randomUUID().slice(0, 8)}`
const env = useApiAndTemporal({ TEMPORAL_TASK_QUEUE_PREFIX: prefix })

const workers = killableWorkers('models-crash', { TEMPORAL_TASK_QUEUE_PREFIX: prefix, WORKER_TASK_QUEUES: 'storage,models' })

/** How many objects the pending validation activity's last heartbeat recorded (as the server has it). */
async function measuredSoFar(workflowId: string): Promise<number> {
  const { raw } = await env.t.client.workflow.getHandle(workflowId).describe()
  const payload = raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.[0]
  return payload?.data ? JSON.parse(Buffer.from(payload.data).toString('utf8')).measured.length : 0
}

describe('a worker killed mid-validation', () => {
  test('the version turns ready once on the next worker, resumed from the heartbeat', async () => {
    const first = await workers.start('models-worker-1')
    const t = await modelTenant(env.api.url)
    const keys = Array.from({ length: OBJECTS }, (_, i) => `crash/bundle/part-${String(i).padStart(4, '0')}`)
    await upload(localS3(), t.general, keys, 'part')
    const v = (
      await t.pat.post('/model-versions', {
        name: 'crash',
        format: 'lerobot',
        source: { kind: 'model_bundle', prefix: 'crash/bundle', objects: keys.map((k) => ({ key: k.slice('crash/bundle/'.length), sha256: sha256('part') })) },
      })
    ).json.data
    expect((await t.pat.post(`/model-versions/${v.id}/validations`)).status).toBe(202)
    const workflowId = modelsWorkflowIds.validation(t.tenantId, v.id)
    await eventually('the validation to have measured some objects', async () => ((await measuredSoFar(workflowId)) > 0 ? true : undefined), 30_000)
    await first.stop()
    expect((await t.pat.get(`/model-versions/${v.id}`)).json.data.status).toBe('validating')

    const second = await workers.start('models-worker-2')
    const ready = await settled(t.pat, v.id, 90_000)
    expect(ready).toMatchObject({ status: 'ready', totalBytes: OBJECTS * 4 })
    expect(ready.objects.length).toBe(OBJECTS)
    const events = await env.api.sql`select type from events where tenant_id = ${t.tenantId} and type like 'model_version.%'`
    expect(events.map((e) => e.type)).toEqual(['model_version.ready'])
    const resumed = readFileSync(second.logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('model version validation resumes'))
      .map((l) => JSON.parse(l))
    expect(resumed.length).toBe(1)
    expect(resumed[0].measured).toBeGreaterThan(0)
  }, 300_000)
})
