/** Runs `flush` every `intervalMs` without holding the process open, and once more on stop: the in-memory tallies
 *  that write one batch per interval instead of a row per request (PAT uses, API request usage) share it. */
export class IntervalFlush {
  private timer: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly flush: () => Promise<void>,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.intervalMs)
    this.timer.unref?.()
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.flush()
  }
}
