// The deletion keeps up with the schema: a new table with a tenant_id column, or a new bucket kind, fails here until it
// has a deletion step (or a reason to be retained), and the steps run children before the tables they reference.
import { describe, expect, test } from 'bun:test'
import { BUCKET_KINDS, BUCKET_POLICY } from '../../api/storage/s3'
import { foreignKeyEdges, tablesWithTenantId } from '../../api/tenant-deletion/queries'
import { BUCKET_STEPS, RETAINED_TABLES, TABLE_STEPS } from '../../api/tenant-deletion/steps'
import { useApi } from '../support/api'

const api = useApi()

describe('every place a tenant has data has a deletion step', () => {
  test('each table with a tenant_id column (information_schema) is a step or retained with a reason, and each step is such a table', async () => {
    const live = (await tablesWithTenantId(api.sql)).map((r) => r.table_name)
    expect(live.length).toBeGreaterThan(20)
    const covered = new Set<string>([...TABLE_STEPS, ...Object.keys(RETAINED_TABLES)])
    expect(live.filter((t) => !covered.has(t))).toEqual([])
    expect([...covered].filter((t) => !live.includes(t))).toEqual([])
    expect(new Set(TABLE_STEPS).size).toBe(TABLE_STEPS.length)
    for (const reason of Object.values(RETAINED_TABLES)) expect(reason.length).toBeGreaterThan(20)
  })

  test('a table is deleted before every table it references (FK-safe order)', async () => {
    const at = new Map<string, number>(TABLE_STEPS.map((t, i) => [t, i]))
    const wrong = (await foreignKeyEdges(api.sql))
      .filter((e) => e.child !== e.parent && at.has(e.child) && at.has(e.parent))
      .filter((e) => at.get(e.child)! > at.get(e.parent)!)
    expect(wrong).toEqual([])
  })

  test('each bucket kind is a step', () => {
    expect([...BUCKET_STEPS].sort()).toEqual([...BUCKET_KINDS].sort())
    expect(Object.keys(BUCKET_POLICY).filter((k) => !BUCKET_STEPS.includes(k as never))).toEqual([])
  })
})
