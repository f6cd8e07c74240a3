// Ports for servers started on this machine: free ones for tests and benchmarks, and a clear error for fixed ones.
import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'

const handedOut = new Set<number>()

let range: { low: number; high: number } | undefined

/** The kernel's range for the local ports of outgoing connections (Linux; its default where unreadable). */
export function ephemeralRange(): { low: number; high: number } {
  if (range) return range
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number)
    if (low! > 0 && high! >= low!) return (range = { low: low!, high: high! })
  } catch {
    /* not Linux */
  }
  return (range = { low: 32768, high: 60999 })
}

/** Candidates below the ephemeral range: a port the kernel handed out for `listen(0)` is in that range, and once
 *  the probe closes it, any process's next outgoing connection may take it as its local port before the server the
 *  port was meant for binds it (a busy suite opens thousands). Below the range only another listener can. */
function candidate(): number {
  const low = 10_000
  const high = ephemeralRange().low - 1
  return low + Math.floor(Math.random() * (high - low + 1))
}

const MAX_TRIES = 200

/** A port nobody listens on right now, below the ephemeral range; never the same one twice in this process. */
export function freePortSync(): number {
  for (let i = 0; i < MAX_TRIES; i++) {
    const port = candidate()
    if (handedOut.has(port)) continue
    try {
      Bun.serve({ port, hostname: '127.0.0.1', fetch: () => new Response() }).stop(true)
    } catch {
      continue // someone listens there
    }
    handedOut.add(port)
    return port
  }
  throw new Error(`no free port found below ${ephemeralRange().low} in ${MAX_TRIES} tries`)
}

/** The same, for the callers that await it. */
export const freePort = async (): Promise<number> => freePortSync()

/** Fails fast, naming the variable to change, instead of letting a server die on EADDRINUSE in its log. */
export async function assertPortFree(port: number, what: string, envName: string) {
  const taken = await new Promise<boolean>((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(true))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)))
  })
  if (taken) throw new Error(`port ${port} (${what}) is already in use; free it or set ${envName} to another port`)
}
