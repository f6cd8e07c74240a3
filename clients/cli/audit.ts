// rcp audit tail: the current tenant's audit trail, the latest entries oldest first, and with --follow the new ones
// as they are written (polled every two seconds: the API has no stream of its own for people).
import { items, type components } from '../ts'
import type { Command } from './context'
import { usage } from './exit'
import { table } from './output'

type Entry = components['schemas']['AuditEntryDto']

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 }

export function parseSince(s: string): number {
  const m = /^(\d+)([smhd])$/.exec(s)
  if (!m) throw usage('--since takes a duration such as 30m, 2h or 7d')
  return Number(m[1]) * UNITS[m[2]!]! * 1000
}

const cells = (e: Entry) => [
  e.occurredAt,
  e.action,
  e.outcome,
  e.actor.label ?? e.actor.id ?? e.actor.type,
  e.target ? `${e.target.type}:${e.target.id ?? '-'}` : null,
]
const HEADER = ['TIME', 'ACTION', 'OUTCOME', 'ACTOR', 'TARGET']

export async function tail(cmd: Command): Promise<void> {
  const since = parseSince(cmd.flags.string('since') ?? '24h')
  const limit = cmd.flags.int('limit', 1, 1000) ?? 20
  const action = cmd.flags.string('action')
  const follow = cmd.flags.bool('follow')
  const everyMs = cmd.flags.int('interval-ms', 200, 60_000) ?? 2000
  cmd.flags.done()
  const { rcp } = cmd.client()
  const window = async (from: Date) => {
    const got: Entry[] = []
    const query = { from: from.toISOString(), to: new Date(Date.now() + 1000).toISOString(), pageSize: 100, ...(action ? { action } : {}) }
    for await (const e of items(rcp, '/v1/tenants/current/audit-log', { params: { query } })) {
      got.push(e)
      if (!follow && got.length >= limit) break
    }
    return got.reverse() // the API answers newest first
  }
  const first = (await window(new Date(Date.now() - since))).slice(-limit)
  if (!follow) {
    cmd.out.result(first, () => table(HEADER, first.map(cells)))
    return
  }
  // Following: one line (or one JSON document) per entry, as they come
  const seen = new Set<string>()
  const print = (e: Entry) => {
    seen.add(e.id)
    process.stdout.write(
      `${
        cmd.out.json
          ? JSON.stringify(e)
          : cells(e)
              .map((c) => c ?? '-')
              .join('  ')
      }\n`,
    )
  }
  for (const e of first) print(e)
  let from = first.length > 0 ? new Date(first[first.length - 1]!.occurredAt) : new Date()
  let stopped = false
  process.on('SIGINT', () => {
    stopped = true
  })
  while (!stopped) {
    await Bun.sleep(everyMs)
    for (const e of await window(from)) {
      if (seen.has(e.id)) continue
      print(e)
      from = new Date(e.occurredAt)
    }
  }
}
