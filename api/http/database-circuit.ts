/** While the database is away, requests are refused on arrival (503) instead of queueing for a pool connection
 *  that is not coming: for `shedMs` after any request met it unavailable. The first request after that window
 *  tries again, so the API notices the database's return by itself, within one window. */
export class DatabaseCircuit {
  private openUntil = 0

  constructor(private readonly shedMs: number) {}

  trip(): void {
    this.openUntil = performance.now() + this.shedMs
  }

  /** Read on every request: a field compare unless the circuit has been tripped. */
  get open(): boolean {
    if (this.openUntil === 0) return false
    if (performance.now() < this.openUntil) return true
    this.openUntil = 0
    return false
  }
}
