// A small argv parser: positionals, `--flag value`, `--flag=value` and boolean flags named up front, so a typo is a
// usage error (exit 2) rather than a silently ignored option.
import { usage } from './exit'

export interface Parsed {
  positionals: string[]
  flags: Map<string, string | true>
}

export function parseArgs(argv: string[], booleans: ReadonlySet<string>): Parsed {
  const positionals: string[] = []
  const flags = new Map<string, string | true>()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1))
      break
    }
    if (!arg.startsWith('--') || arg === '--') {
      positionals.push(arg)
      continue
    }
    const eq = arg.indexOf('=')
    const name = arg.slice(2, eq === -1 ? undefined : eq)
    if (booleans.has(name)) {
      if (eq !== -1) throw usage(`--${name} takes no value`)
      flags.set(name, true)
      continue
    }
    const value = eq === -1 ? argv[++i] : arg.slice(eq + 1)
    if (value === undefined) throw usage(`--${name} needs a value`)
    flags.set(name, value)
  }
  return { positionals, flags }
}

/** The flags a command reads: each read marks its flag as known; `done()` refuses the rest. */
export class Flags {
  private readonly read = new Set<string>()
  constructor(private readonly parsed: Parsed) {}

  string(name: string): string | undefined {
    this.read.add(name)
    const v = this.parsed.flags.get(name)
    if (v === true) throw usage(`--${name} needs a value`)
    return v
  }

  required(name: string): string {
    const v = this.string(name)
    if (v === undefined) throw usage(`--${name} is required`)
    return v
  }

  int(name: string, min: number, max: number): number | undefined {
    const v = this.string(name)
    if (v === undefined) return undefined
    const n = Number(v)
    if (!Number.isInteger(n) || n < min || n > max) throw usage(`--${name} must be an integer from ${min} to ${max}`)
    return n
  }

  bool(name: string): boolean {
    this.read.add(name)
    return this.parsed.flags.get(name) === true
  }

  done(): void {
    for (const name of this.parsed.flags.keys()) if (!this.read.has(name)) throw usage(`unknown option --${name}`)
  }
}
