// What a benchmark run prints and keeps: one table (every row's ratio to every baseline measured in the same run,
// PASS or MISS where a row has a target) and bench/results/<name>.json.
import { cpus } from 'node:os'
import { join } from 'node:path'
import type { Measure, Sample } from './measure'

export interface Result {
  measure: Measure
  baseline: boolean
  samples: Sample[]
  error?: string
  /** A paired row's rate over its baseline's, one per round (bench/harness.ts Plan.paired). */
  pairRatios?: number[]
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** Rates and p50s are the median of the samples (the mean of a baseline's before and after); p99 is the worst. */
function summary(r: Result) {
  const of = (k: 'p50Ms' | 'p99Ms' | 'cpuUsPerRequest') => r.samples.map((s) => s[k]).filter((v): v is number => v !== undefined)
  const p50 = of('p50Ms')
  const p99 = of('p99Ms')
  const cpu = of('cpuUsPerRequest')
  return {
    rate: r.samples.length ? median(r.samples.map((s) => s.rate)) : undefined,
    p50Ms: p50.length ? median(p50) : undefined,
    p99Ms: p99.length ? Math.max(...p99) : undefined,
    cpuUsPerRequest: cpu.length ? median(cpu) : undefined,
  }
}

function judge(results: Result[]) {
  const baselines = results.filter((r) => r.baseline)
  const rateOf = new Map(baselines.map((b) => [b.measure.name, summary(b).rate]))
  return results.map((r) => {
    const s = summary(r)
    const ratios = Object.fromEntries(
      baselines.map((b) => [b.measure.name, s.rate && rateOf.get(b.measure.name) ? s.rate / rateOf.get(b.measure.name)! : undefined]),
    )
    const m = r.measure
    if (m.targetOf && r.pairRatios?.length) ratios[m.targetOf] = median(r.pairRatios)
    const of = m.targetOf ?? baselines[0]?.measure.name
    const judged = !r.baseline && (m.target !== undefined || m.minRate !== undefined || m.maxP50Ms !== undefined || m.maxP99Ms !== undefined)
    const pass =
      judged && s.rate !== undefined
        ? (m.target === undefined || (ratios[of!] ?? 0) >= m.target) &&
          s.rate >= (m.minRate ?? 0) &&
          (s.p50Ms ?? 0) <= (m.maxP50Ms ?? Infinity) &&
          (s.p99Ms ?? 0) <= (m.maxP99Ms ?? Infinity)
        : undefined
    const goal = [
      m.target === undefined ? '' : `≥ ${(m.target * 100).toFixed(0)}% of baseline ${baselines.findIndex((b) => b.measure.name === of) + 1}`,
      m.minRate === undefined ? '' : `≥ ${m.minRate.toLocaleString('en-US')}/s`,
      m.maxP50Ms === undefined ? '' : `p50 ≤ ${m.maxP50Ms} ms`,
      m.maxP99Ms === undefined ? '' : `p99 ≤ ${m.maxP99Ms} ms`,
    ]
      .filter(Boolean)
      .join(', ')
    return {
      name: m.name,
      baseline: r.baseline,
      ...s,
      samples: r.samples,
      pairRatios: r.pairRatios?.length ? r.pairRatios : undefined,
      ratios,
      goal: goal || undefined,
      pass,
      error: r.error,
    }
  })
}

export function printTable(results: Result[]) {
  const judged = judge(results)
  const baselineNames = results.filter((r) => r.baseline).map((r) => r.measure.name)
  const fmt = (n: number | undefined, digits = 1) => (n === undefined ? '' : n.toFixed(digits))
  const pct = (n: number | undefined) => (n === undefined ? '' : `${n < 0.001 ? (n * 100).toPrecision(2) : (n * 100).toFixed(1)}%`)
  // The server's CPU per request, where the run could read it: steadier than the rate on a machine whose neighbours
  // come and go, since it leaves out the time the server waited for a core.
  const cpu = judged.some((r) => r.cpuUsPerRequest !== undefined)
  const header = ['', 'per second', 'p50 ms', 'p99 ms', ...(cpu ? ['server CPU µs/req'] : []), ...baselineNames.map((_, i) => `vs baseline ${i + 1}`), 'target']
  const lines = [
    header,
    ...judged.map((r) => [
      r.baseline ? `baseline ${baselineNames.indexOf(r.name) + 1}: ${r.name}` : r.name,
      fmt(r.rate, r.rate !== undefined && r.rate < 100 ? 1 : 0),
      fmt(r.p50Ms, 2),
      fmt(r.p99Ms, 2),
      ...(cpu ? [fmt(r.cpuUsPerRequest, 1)] : []),
      ...baselineNames.map((b) => pct(r.ratios[b])),
      r.error ? `ERROR: ${r.error}` : r.pass === undefined ? '' : `${r.pass ? 'PASS' : 'MISS'} (${r.goal})`,
    ]),
  ]
  const widths = header.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)))
  const last = header.length - 1
  const show = (l: string[]) =>
    l
      .map((c, i) => (i === 0 || i === last ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join(' | ')
      .trimEnd()
  console.log(`\n${show(header)}\n${widths.map((w) => '-'.repeat(w)).join('-|-')}`)
  for (const l of lines.slice(1)) console.log(show(l))
  console.log('\nbaselines are the median of their samples, measured before and after the rows; rows the median of their rounds, p99 the worst')
  for (const r of results.filter((x) => x.pairRatios?.length)) {
    console.log(
      `paired: ${r.measure.name}: against "${r.measure.targetOf}" measured beside it, the median of ${r.pairRatios!.length} ` +
        `rounds' ratios (${r.pairRatios!.map((x) => `${(x * 100).toFixed(1)}%`).join(', ')})`,
    )
  }
  for (const r of judged) {
    for (const n of new Set(r.samples.map((s) => s.note).filter(Boolean))) console.log(`note: ${r.name}: ${n}`)
    for (const w of new Set(r.samples.map((s) => s.warning).filter(Boolean))) console.log(`warning: ${r.name}: ${w}`)
    const rates = r.samples.map((s) => s.rate)
    if (r.baseline && r.rate && rates.length > 1 && (Math.max(...rates) - Math.min(...rates)) / r.rate > 0.1) {
      console.log(
        `warning: ${r.name} moved ${(((Math.max(...rates) - Math.min(...rates)) / r.rate) * 100).toFixed(0)}% within the run: the machine was busy; rerun`,
      )
    }
  }
}

export async function writeReport(name: string, meta: Record<string, unknown>, results: Result[]) {
  const commit = Bun.spawnSync(['git', 'rev-parse', '--short', 'HEAD']).stdout.toString().trim()
  const loadAvg = (
    await Bun.file('/proc/loadavg')
      .text()
      .catch(() => '')
  ).split(' ')[0]
  const file = join(import.meta.dir, 'results', `${name}.json`)
  await Bun.write(
    file,
    `${JSON.stringify(
      {
        at: new Date().toISOString(),
        benchmark: name,
        ...meta,
        cores: cpus().length,
        cpu: cpus()[0]?.model,
        bun: Bun.version,
        loadAverage: loadAvg ? Number(loadAvg) : null,
        commit: /^[0-9a-f]{7,}$/.test(commit) ? commit : null,
        results: judge(results),
      },
      null,
      2,
    )}\n`,
  )
  console.log(`\nresults: ${file}`)
}
