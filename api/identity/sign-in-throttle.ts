import type { Config } from '../platform/config'
import { rateLimited } from '../platform/errors'

/** Failed sign-ins per key (an account's email, a client address) within a window that restarts with each
 *  failure: the first `free` cost nothing, then each attempt waits base·2^(n−free) ms (capped), and from `lock`
 *  failures on attempts are refused with 429 until the window has passed. Kept in this process's memory, like
 *  the rate budgets (docs/api.md "Sign-in throttling"). */
interface Limits {
  free: number
  lock: number
  baseDelayMs: number
}

const WINDOW_MS = 15 * 60_000
const MAX_DELAY_MS = 8_000

export class SignInThrottle {
  private failures = new Map<string, { n: number; last: number }>()
  private account: Limits
  private ip: Limits

  constructor(
    config: Pick<Config, 'SIGNIN_ACCOUNT_LOCK_FAILURES' | 'SIGNIN_IP_LOCK_FAILURES' | 'SIGNIN_DELAY_BASE_MS'>,
    private now = () => Date.now(),
  ) {
    const limits = (free: number, lock: number): Limits => ({ free: Math.min(free, Math.max(lock - 1, 0)), lock, baseDelayMs: config.SIGNIN_DELAY_BASE_MS })
    this.account = limits(3, config.SIGNIN_ACCOUNT_LOCK_FAILURES)
    this.ip = limits(20, config.SIGNIN_IP_LOCK_FAILURES)
  }

  private entry(key: string) {
    const e = this.failures.get(key)
    if (e && this.now() - e.last >= WINDOW_MS) {
      this.failures.delete(key)
      return undefined
    }
    return e
  }

  private assess(key: string, l: Limits): { delayMs: number; retryAfter?: number } {
    const e = this.entry(key)
    if (!e || l.lock <= 0) return { delayMs: 0 }
    if (e.n >= l.lock) return { delayMs: 0, retryAfter: Math.max(1, Math.ceil((e.last + WINDOW_MS - this.now()) / 1000)) }
    return { delayMs: e.n < l.free ? 0 : Math.min(MAX_DELAY_MS, l.baseDelayMs * 2 ** (e.n - l.free)) }
  }

  /** Before the password is checked: waits the current delay, or throws 429 RATE_LIMITED when locked. */
  async admit(email: string, ip: string): Promise<void> {
    const checks = [
      { ...this.assess(`account:${email.toLowerCase()}`, this.account), limit: this.account.lock },
      { ...this.assess(`ip:${ip}`, this.ip), limit: this.ip.lock },
    ]
    const locked = checks.find((c) => c.retryAfter !== undefined)
    if (locked) {
      throw rateLimited('Too many failed sign-ins', { budget: 'sign_in', limit: locked.limit, windowSeconds: WINDOW_MS / 1000, retryAfter: locked.retryAfter! })
    }
    const delayMs = Math.max(...checks.map((c) => c.delayMs))
    if (delayMs > 0) await Bun.sleep(delayMs)
  }

  failed(email: string, ip: string): void {
    for (const key of [`account:${email.toLowerCase()}`, `ip:${ip}`]) {
      const e = this.entry(key)
      this.failures.set(key, { n: (e?.n ?? 0) + 1, last: this.now() })
    }
    if (this.failures.size > 100_000) this.sweep()
  }

  /** A correct password clears the account's count (not the address's: one success must not launder a spray). */
  succeeded(email: string): void {
    this.failures.delete(`account:${email.toLowerCase()}`)
  }

  private sweep() {
    const t = this.now()
    for (const [k, e] of this.failures) if (t - e.last >= WINDOW_MS) this.failures.delete(k)
  }
}
