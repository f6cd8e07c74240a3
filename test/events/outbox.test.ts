import { describe, expect, test } from 'bun:test'
import { publishEvent } from '../../api/events/service'
import { createDb } from '../../api/platform/db'
import { useApi } from '../support/api'
import { tenantOwner } from '../support/fixtures'
import { ownDatabase } from '../support/own-database'

const api = useApi()

// The tenant's own audit entries (tenant.created, ...) are events too; these tests are about the others.
const eventsOf = async (tenantId: string) => [
  ...(await api.sql<{ type: string; data: Record<string, unknown> }[]>`
  select type, data from events where tenant_id = ${tenantId} and type <> 'audit.entry' order by occurred_at, id`),
]

const finished = { trainingJobId: crypto.randomUUID(), name: 'pick-and-place', outputArtifactPath: 'runs/42/model.onnx' }

describe('the event outbox', () => {
  test('an event published in a committed transaction is there, with its data as the catalogue shapes it', async () => {
    const { tenantId } = await tenantOwner(api.url)
    await api.sql.begin((tx) => publishEvent(tx, tenantId, 'training_job.completed', finished))
    // The catalogue fills in what a producer may leave out: a tenant-wide job's projectId is null.
    expect(await eventsOf(tenantId)).toEqual([{ type: 'training_job.completed', data: { ...finished, projectId: null } }])
  })

  test('a rolled-back change publishes nothing', async () => {
    const { tenantId } = await tenantOwner(api.url)
    const rollback = api.sql.begin(async (tx) => {
      await publishEvent(tx, tenantId, 'training_job.completed', finished)
      throw new Error('the change failed after publishing')
    })
    await expect(rollback).rejects.toThrow('the change failed after publishing')
    expect(await eventsOf(tenantId)).toEqual([])
  })

  test('data that does not match the catalogue is refused before anything is written', async () => {
    const { tenantId } = await tenantOwner(api.url)
    const drifted = { ...finished, trainingJobId: 'not-a-uuid' }
    await expect(api.sql.begin((tx) => publishEvent(tx, tenantId, 'training_job.completed', drifted))).rejects.toThrow()
    expect(await eventsOf(tenantId)).toEqual([])
  })

  test('a commit wakes listeners on rcp_events once, however many rows it wrote', async () => {
    // NOTIFY reaches every listener of the database: in the shared one, other files' commits wake it too. A database
    // of this test's own makes every wake one of its own commits.
    const db = await ownDatabase('outbox')
    const own = createDb(db.url, { max: 2 })
    try {
      const [tenant] = await own<{ id: string }[]>`insert into tenants (name, slug) values ('outbox', 'outbox') returning id`
      let wakes = 0
      let marked!: () => void
      const marker = new Promise<void>((resolve) => {
        marked = resolve
      })
      const listener = await own.listen('rcp_events', (payload) => {
        if (payload === 'marker') marked()
        else wakes++
      })
      await own.begin(async (tx) => {
        for (let i = 0; i < 5; i++) await publishEvent(tx, tenant!.id, 'training_job.completed', finished)
        await publishEvent(tx, tenant!.id, 'training_job.failed', { trainingJobId: finished.trainingJobId, name: 'x', reason: 'oom' })
      })
      // A later commit's notification (a payload of its own, so Postgres does not fold it into the outbox's): one
      // session hears notifications in commit order, so when it arrives every notification of the six rows has.
      await own`select pg_notify('rcp_events', 'marker')`
      await marker
      expect(wakes).toBe(1) // six rows in one transaction fold into one notification
      await listener.unlisten()
    } finally {
      await own.end({ timeout: 5 })
      await db.drop()
    }
  }, 60_000)
})
