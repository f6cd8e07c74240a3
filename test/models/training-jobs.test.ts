import { describe, expect, test } from 'bun:test'
import { useApi } from '../support/api'
import { modelWriter } from './support'

const api = useApi()

// The outbox without the audit trail's own audit.entry events (every recorded change adds one).
const eventsOf = (tenantId: string) =>
  api.sql<{ type: string; data: Record<string, unknown> }[]>`
  select type, data from events where tenant_id = ${tenantId} and type <> 'audit.entry' order by occurred_at, id`.then((rows) => [...rows])

describe('training jobs', () => {
  test('a job runs, completes once with its output artifact, and training_job.completed is published with it', async () => {
    const { pat, tenantId } = await modelWriter(api.url)
    const created = await pat.post('/training-jobs', { name: 'pi0 finetune' })
    expect(created.status).toBe(201)
    const job = created.json.data
    expect(job).toMatchObject({ name: 'pi0 finetune', status: 'running', outputArtifactPath: null, completedAt: null })

    const done = await pat.post(`/training-jobs/${job.id}/completion`, { status: 'completed', outputArtifactPath: 'runs/pi0/model.onnx' })
    expect(done.status).toBe(200)
    expect(done.json.data).toMatchObject({ status: 'completed', outputArtifactPath: 'runs/pi0/model.onnx', failureReason: null })
    expect(done.json.data.completedAt).not.toBeNull()
    expect(await eventsOf(tenantId)).toEqual([
      { type: 'training_job.completed', data: { trainingJobId: job.id, name: 'pi0 finetune', outputArtifactPath: 'runs/pi0/model.onnx', projectId: null } },
    ])

    const again = await pat.post(`/training-jobs/${job.id}/completion`, { status: 'failed', reason: 'late' })
    expect([again.status, again.json.code]).toEqual([409, 'MODEL_BUNDLE_JOB_NOT_RUNNING'])
    expect((await pat.get(`/training-jobs/${job.id}`)).json.data).toEqual(done.json.data)
    expect((await eventsOf(tenantId)).length).toBe(1)
  })

  test('a failed job records its reason and publishes training_job.failed', async () => {
    const { pat, tenantId } = await modelWriter(api.url)
    const job = (await pat.post('/training-jobs', { name: 'diverged' })).json.data
    const failed = await pat.post(`/training-jobs/${job.id}/completion`, { status: 'failed', reason: 'loss became NaN at step 1200' })
    expect(failed.json.data).toMatchObject({ status: 'failed', failureReason: 'loss became NaN at step 1200', outputArtifactPath: null })
    expect(await eventsOf(tenantId)).toEqual([
      { type: 'training_job.failed', data: { trainingJobId: job.id, name: 'diverged', reason: 'loss became NaN at step 1200', projectId: null } },
    ])
  })

  test('an output path outside the general bucket is IMPORTED_CHECKPOINT_INVALID_PATH; contradictions are VALIDATION_ERROR; nothing is published', async () => {
    const { pat, tenantId } = await modelWriter(api.url)
    const job = (await pat.post('/training-jobs', { name: 'j' })).json.data
    for (const path of ['../other/model.onnx', '/etc/passwd', 'runs\\model.onnx', 's3://someone-else/model.onnx', '', 'runs//model.onnx']) {
      const res = await pat.post(`/training-jobs/${job.id}/completion`, { status: 'completed', outputArtifactPath: path })
      expect({ path, status: res.status, code: res.json.code }).toEqual({ path, status: 400, code: 'IMPORTED_CHECKPOINT_INVALID_PATH' })
    }
    const failedWithPath = await pat.post(`/training-jobs/${job.id}/completion`, { status: 'failed', outputArtifactPath: 'runs/m.onnx' })
    expect([failedWithPath.status, failedWithPath.json.code]).toEqual([400, 'VALIDATION_ERROR'])
    expect((await pat.get(`/training-jobs/${job.id}`)).json.data.status).toBe('running')
    expect(await eventsOf(tenantId)).toEqual([])
  })

  test("the list filters by status; unknown and other tenants' ids are MODEL_BUNDLE_JOB_NOT_FOUND", async () => {
    const a = await modelWriter(api.url)
    const running = (await a.pat.post('/training-jobs', { name: 'r' })).json.data
    const finished = (await a.pat.post('/training-jobs', { name: 'c' })).json.data
    await a.pat.post(`/training-jobs/${finished.id}/completion`, { status: 'completed' })
    const ids = async (q: string) => (await a.pat.get(`/training-jobs${q}`)).json.data.map((j: { id: string }) => j.id)
    expect(await ids('')).toEqual([finished.id, running.id])
    expect(await ids('?status=running')).toEqual([running.id])
    expect(await ids('?status=completed')).toEqual([finished.id])

    const b = await modelWriter(api.url)
    expect((await b.pat.get('/training-jobs')).json.data).toEqual([])
    for (const res of [
      await b.pat.get(`/training-jobs/${running.id}`),
      await b.pat.post(`/training-jobs/${running.id}/completion`, { status: 'failed', reason: 'x' }),
      await a.pat.get(`/training-jobs/${crypto.randomUUID()}`),
      await a.pat.get('/training-jobs/not-a-uuid'),
    ])
      expect([res.status, res.json.code]).toEqual([404, 'MODEL_BUNDLE_JOB_NOT_FOUND'])
    expect((await a.pat.get(`/training-jobs/${running.id}`)).json.data.status).toBe('running')
  })
})
