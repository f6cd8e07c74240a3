// Latency rows measured one call at a time (a query through the driver, one HTTP request on one connection): the
// quantile the harness's tables print, and a measurement that awaits a call back to back for the warm-up and then
// for the measured duration.
import type { Harness } from './harness'
import type { Sample } from './measure'

/** The q-quantile of ascending `sorted` (nearest rank). */
export const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

/** `fn` awaited back to back for the warm-up, then for the measured duration. */
export function oneAtATime(h: Harness, fn: () => Promise<unknown>): () => Promise<Sample> {
  const burst = async (seconds: number) => {
    const latencies: number[] = []
    const deadline = performance.now() + seconds * 1000
    while (performance.now() < deadline) {
      const t0 = performance.now()
      await fn()
      latencies.push(performance.now() - t0)
    }
    return { latencies, seconds: seconds + (performance.now() - deadline) / 1000 }
  }
  return async () => {
    if (h.settings.warmup > 0) await burst(h.settings.warmup)
    const m = await burst(h.settings.duration)
    const sorted = m.latencies.sort((a, b) => a - b)
    return { rate: m.latencies.length / m.seconds, p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99) }
  }
}
