// The load generator driver of every HTTP benchmark: wrk when installed (`apt-get install wrk`), autocannon in this
// process otherwise. Both return the same measurement.
import { join } from 'node:path'
import { spawnChild, type Child } from '../scripts/platform'

export interface Target {
  url: string
  method: string
  headers: Record<string, string>
  body?: string
  connections: number
}
export interface Measured {
  rps: number
  p50Ms: number
  p99Ms: number
  requests: number
  non2xx: number
  errors: number
}
export interface Generator {
  name: string
  drive(t: Target, seconds: number): Promise<Measured>
}

// Every byte as a decimal escape: a Lua string literal for any header or body, no quoting rules to get wrong.
const lua = (s: string) => `"${[...Buffer.from(s)].map((b) => `\\${b}`).join('')}"`

function wrk(scratch: string, threads: number, running: Set<Child>): Generator['drive'] {
  return async (t, seconds) => {
    const script = join(scratch, 'target.lua')
    await Bun.write(
      script,
      [
        `wrk.method = ${lua(t.method)}`,
        ...(t.body === undefined ? [] : [`wrk.body = ${lua(t.body)}`]),
        ...Object.entries(t.headers).map(([k, v]) => `wrk.headers[${lua(k)}] = ${lua(v)}`),
        'done = function(s, latency)',
        '  local e = s.errors',
        '  io.write(string.format("\\nRESULT %d %d %.1f %.1f %d %d\\n", s.requests, s.duration,',
        '    latency:percentile(50), latency:percentile(99), e.status, e.connect + e.read + e.write + e.timeout))',
        'end',
      ].join('\n'),
    )
    const cmd = ['wrk', `-t${Math.min(threads, t.connections)}`, `-c${t.connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', script, t.url]
    const proc = spawnChild('wrk', { cmd, pipe: true })
    running.add(proc)
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    running.delete(proc)
    const line = out.split('\n').find((l) => l.startsWith('RESULT '))
    if (!line) throw new Error(`wrk printed no result:\n${out}${err}`)
    const [requests, durationUs, p50Us, p99Us, non2xx, errors] = line.split(' ').slice(1).map(Number) as number[]
    return { rps: requests! / (durationUs! / 1e6), p50Ms: p50Us! / 1000, p99Ms: p99Us! / 1000, requests: requests!, non2xx: non2xx!, errors: errors! }
  }
}

async function autocannon(t: Target, seconds: number): Promise<Measured> {
  const run = (await import('autocannon' as string)).default
  const r = await run({ ...t, duration: seconds })
  return {
    rps: r.requests.total / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  }
}

/** `choice` is 'wrk' or 'autocannon'; by default wrk when it is on the PATH. `running` collects the wrk processes
 *  so a teardown can stop one in flight. */
export async function loadGenerator(choice: string | undefined, o: { scratch: string; threads: number; running: Set<Child> }): Promise<Generator> {
  if ((choice ?? (Bun.which('wrk') ? 'wrk' : 'autocannon')) === 'wrk') {
    const version =
      Bun.spawnSync(['wrk', '-v'])
        .stdout.toString()
        .match(/wrk \S+/)?.[0] ?? 'wrk'
    return { name: `${version}, ${o.threads} thread(s)`, drive: wrk(o.scratch, o.threads, o.running) }
  }
  return { name: `autocannon ${(await import('autocannon/package.json')).version} (in the runner's process)`, drive: autocannon }
}
