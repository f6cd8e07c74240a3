// A time a client names is stored and read back as given, whatever its year. The driver read Postgres's text form of
// a time with `new Date`, which in Bun fails before year 100: an audit export of such a window was stored, and its
// answer failed with 500 (found by the schema fuzzer: from 0029-11-14T12:40:18.799-23:40).
import { expect, test } from 'bun:test'
import { parseTime } from '../../api/platform/db'
import { provisionedTenant } from '../storage/helpers'
import { useApi } from '../support/api'

const api = useApi()

test('an audit export of a window in year 29 answers 201 with that window', async () => {
  const owner = await provisionedTenant(api.url)
  const res = await owner.client.post('/tenants/current/audit-log/exports', { from: '0029-11-14T12:40:18.799-23:40', to: '0029-11-14T13:40:18.799-23:40' })
  expect(res.status).toBe(201)
  expect({ from: res.json.data.from, to: res.json.data.to }).toEqual({ from: '0029-11-15T12:20:18.799Z', to: '0029-11-15T13:20:18.799Z' })
})

test('every time and date type reads back the instant Postgres holds, before year 100 and after', async () => {
  const [row] = await api.sql<{ tz: Date; early: Date; micro: Date; day: Date }[]>`
    select '0029-11-15 12:20:18.799+00'::timestamptz as early, '2026-11-15 12:20:18.799123+05:30'::timestamptz as micro,
           '0001-01-01 00:00:00+00'::timestamptz as tz, '0029-11-15'::date as day`
  expect({ early: row!.early.toISOString(), micro: row!.micro.toISOString(), tz: row!.tz.toISOString() }).toEqual({
    early: '0029-11-15T12:20:18.799Z',
    micro: '2026-11-15T06:50:18.799Z',
    tz: '0001-01-01T00:00:00.000Z',
  })
  expect(Number.isNaN(row!.day.getTime())).toBe(false)
  expect(parseTime('2026-11-15 12:20:18-03').toISOString()).toBe('2026-11-15T15:20:18.000Z')
})
