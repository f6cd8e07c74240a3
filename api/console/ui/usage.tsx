// Usage over the current billing period, as the people who pay read it: per meter, the days as bars (drawn here as
// inline SVG, stacked by project) and the same numbers beside them as a table, which is what a screen reader reads.
import { api, must } from './api'
import type { components } from './api-types.gen'
import { formatQuantity } from './money'
import type { PageProps } from './page'
import { Problem } from './problem'
import { Empty, Show, useLoad } from './ui'

type Summary = components['schemas']['UsageSummaryDto']
type Row = Summary['rows'][number]
type Meter = Summary['meters'][number]

const DAY = 86_400_000
/** Projects drawn apart in a chart; the rest share one "other projects" series, so the colours stay tellable. */
const SERIES = 5

export interface Period {
  label: string
  start: string
  end: string
}

/** The subscription's current period, or (a deployment that bills no one) the calendar month in UTC, as periods are. */
export async function currentPeriod(): Promise<Period> {
  try {
    const { data } = await must(api.GET('/v1/tenants/current/subscription'))
    return { label: data.currentPeriod.period, ...data.currentPeriod }
  } catch (err) {
    if (!(err instanceof Problem && err.code === 'SUBSCRIPTION_NOT_FOUND')) throw err
    const now = new Date()
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
    const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))
    return { label: start.toISOString().slice(0, 7), start: start.toISOString(), end: end.toISOString() }
  }
}

/** The period's usage by project and UTC day, and the names of the tenant's projects. */
async function loadUsage() {
  const period = await currentPeriod()
  const [summary, projects] = await Promise.all([
    must(api.GET('/v1/tenants/current/usage-summary', { params: { query: { scope: 'tenant', from: period.start, to: period.end, groupBy: 'project,day' } } })),
    must(api.GET('/v1/projects', { params: { query: { pageSize: 100 } } })),
  ])
  return { period, summary: summary.data, names: new Map(projects.data.map((p) => [p.id, p.name])) }
}

export function Usage(_: PageProps) {
  const [loaded] = useLoad(loadUsage, [])
  return (
    <Show loaded={loaded}>
      {({ period, summary, names }) => (
        <>
          <p>
            Period {period.label}: {new Date(period.start).toLocaleDateString(undefined, { timeZone: 'UTC' })} to{' '}
            {new Date(new Date(period.end).getTime() - 1).toLocaleDateString(undefined, { timeZone: 'UTC' })} (UTC days).
          </p>
          {summary.meters.map((m) => (
            <MeterUsage key={m.meter} meter={m} rows={summary.rows.filter((r) => r.meter === m.meter)} period={period} names={names} />
          ))}
        </>
      )}
    </Show>
  )
}

const daysOf = (period: Period) => {
  const days: string[] = []
  for (let t = Date.parse(period.start.slice(0, 10)); t < Date.parse(period.end); t += DAY) days.push(new Date(t).toISOString().slice(0, 10))
  return days
}

interface Series {
  key: string
  label: string
}

/** The projects with the most of this meter, each its own series; the rest in one. */
function seriesOf(rows: Row[], names: Map<string, string>): { series: Series[]; keyOf: (r: Row) => string } {
  const totals = new Map<string, bigint>()
  for (const r of rows) totals.set(r.projectId ?? '', (totals.get(r.projectId ?? '') ?? 0n) + BigInt(r.quantity))
  const ranked = [...totals.entries()].sort((a, b) => (a[1] === b[1] ? 0 : a[1] > b[1] ? -1 : 1)).map(([k]) => k)
  const shown = ranked.length > SERIES ? ranked.slice(0, SERIES - 1) : ranked
  const label = (k: string) => (k === '' ? 'No project' : (names.get(k) ?? `Project ${k.slice(0, 8)}`))
  const series = shown.map((k) => ({ key: k, label: label(k) }))
  if (ranked.length > shown.length) series.push({ key: '*', label: 'Other projects' })
  const own = new Set(shown)
  return { series, keyOf: (r) => (own.has(r.projectId ?? '') ? (r.projectId ?? '') : '*') }
}

function MeterUsage({ meter, rows, period, names }: { meter: Meter; rows: Row[]; period: Period; names: Map<string, string> }) {
  const id = `meter-${meter.meter.replace(/[^a-z0-9]+/gi, '-')}`
  const { series, keyOf } = seriesOf(rows, names)
  // day → series → quantity, exact
  const cells = new Map<string, Map<string, bigint>>()
  for (const r of rows) {
    const day = cells.get(r.day!) ?? new Map<string, bigint>()
    day.set(keyOf(r), (day.get(keyOf(r)) ?? 0n) + BigInt(r.quantity))
    cells.set(r.day!, day)
  }
  const dayTotal = (d: string) => [...(cells.get(d)?.values() ?? [])].reduce((a, b) => a + b, 0n)
  const seriesTotal = (k: string) => [...cells.values()].reduce((a, m) => a + (m.get(k) ?? 0n), 0n)
  const total = series.reduce((a, s) => a + seriesTotal(s.key), 0n)
  const used = [...cells.keys()].sort()
  return (
    <section aria-labelledby={`${id}-title`} class="meter">
      <h2 id={`${id}-title`}>
        <code>{meter.meter}</code>: {formatQuantity(String(total))} {meter.unit}
      </h2>
      <p class="muted">
        {meter.description} ({meter.aggregation})
      </p>
      {rows.length === 0 ? (
        <Empty>Nothing used this period.</Empty>
      ) : (
        <div class="usage">
          <Chart id={id} meter={meter} days={daysOf(period)} series={series} cells={cells} dayTotal={dayTotal} />
          <table aria-labelledby={`${id}-title`}>
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                {series.map((s) => (
                  <th key={s.key} scope="col">
                    {s.label}
                  </th>
                ))}
                <th scope="col">Total</th>
              </tr>
            </thead>
            <tbody>
              {used.map((d) => (
                <tr key={d}>
                  <th scope="row">{d}</th>
                  {series.map((s) => (
                    <td key={s.key} class="n">
                      {formatQuantity(String(cells.get(d)?.get(s.key) ?? 0n))}
                    </td>
                  ))}
                  <td class="n">{formatQuantity(String(dayTotal(d)))}</td>
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row">Period</th>
                {series.map((s) => (
                  <td key={s.key} class="n">
                    {formatQuantity(String(seriesTotal(s.key)))}
                  </td>
                ))}
                <td class="n">{formatQuantity(String(total))}</td>
              </tr>
            </tfoot>
          </table>
        </div>
      )}
    </section>
  )
}

const W = 640
const H = 160
const PAD = 20

/** One bar a day of the period, its segments the series in legend order. Heights are ratios of the tallest day, so a
 *  float is fine here; every number a person reads comes from the exact table. */
function Chart({
  id,
  meter,
  days,
  series,
  cells,
  dayTotal,
}: {
  id: string
  meter: Meter
  days: string[]
  series: Series[]
  cells: Map<string, Map<string, bigint>>
  dayTotal: (d: string) => bigint
}) {
  let peak = 0n
  for (const d of days) if (dayTotal(d) > peak) peak = dayTotal(d)
  const slot = (W - PAD) / days.length
  const scale = (q: bigint) => (peak === 0n ? 0 : (Number(q) / Number(peak)) * (H - PAD))
  return (
    <figure class="usage-figure">
      <svg viewBox={`0 0 ${W} ${H}`} class="usage-chart" role="img" aria-labelledby={`${id}-chart`} data-meter={meter.meter}>
        <title id={`${id}-chart`}>{meter.meter} per UTC day of the period, by project; the table beside has the numbers</title>
        <line x1={PAD} y1={H - PAD} x2={W} y2={H - PAD} class="axis" />
        <text x={0} y={12} class="tick">
          {formatQuantity(String(peak))}
        </text>
        <text x={0} y={H - PAD} class="tick">
          0
        </text>
        {days.map((d, i) => {
          let y = H - PAD
          return (
            <g key={d} data-day={d}>
              {series.map((s, n) => {
                const q = cells.get(d)?.get(s.key) ?? 0n
                if (q === 0n) return null
                const h = Math.max(scale(q), 1)
                y -= h
                return (
                  <rect key={s.key} x={PAD + i * slot + 1} y={y} width={Math.max(slot - 2, 1)} height={h} class={`series-${n}`} data-quantity={String(q)} />
                )
              })}
              {i % 7 === 0 && (
                <text x={PAD + i * slot} y={H - 4} class="tick">
                  {d.slice(5)}
                </text>
              )}
            </g>
          )
        })}
      </svg>
      <figcaption>
        <ul class="legend">
          {series.map((s, n) => (
            <li key={s.key}>
              <svg viewBox="0 0 10 10" width="10" height="10" aria-hidden="true">
                <rect width="10" height="10" class={`series-${n}`} />
              </svg>{' '}
              {s.label}
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  )
}
