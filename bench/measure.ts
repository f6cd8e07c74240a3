// What a benchmark measures and what one measurement gives, apart from the harness that runs them: the harness
// imports the report, and the report reads these, so declaring them in the harness made the two a circle.

/** One measurement: a rate per second, and latencies where there are requests. */
export interface Sample {
  rate: number
  p50Ms?: number
  p99Ms?: number
  warning?: string /** Printed under the table, kept in the results. */
  note?: string
  /** CPU time the serving process spent per request during the measurement (HTTP rows and the ceiling). */
  cpuUsPerRequest?: number
}

export interface Measure {
  name: string
  /** Runs once, just before the first measurement (sign-ups, seeding). */
  setup?(): Promise<void>
  run(): Promise<Sample>
  /** Minimum rate as a fraction of the baseline named `targetOf` (default: the first, the ceiling when there is an API). */
  target?: number
  targetOf?: string
  /** A floor on the rate itself, for a target stated per second rather than against a baseline. */
  minRate?: number
  /** Latency ceilings (ms), judged with the target: PASS needs all of them. */
  maxP50Ms?: number
  maxP99Ms?: number
}
