// A TCP proxy in front of a policy server that is slow the ways a real one is: it accepts connections at once but
// opens the way to the server only `openAfterMs` after it starts (a container port published before the server in
// it listens, a checkpoint still loading), and it can go silent for `freezeMs` once the first request after the
// handshake passes (a server whose event loop is busy compiling the policy: no answer, no pong).
import type { Socket } from 'bun'

export interface SlowProxyOptions {
  openAfterMs?: number
  freezeMs?: number
}

export interface SlowProxy {
  port: number
  stop(): void
}

interface Link {
  writes: number
  toServer: Uint8Array[]
  toClient: Uint8Array[] | null
  upstream: Socket<undefined> | null
}

export function startSlowProxy(target: number, options: SlowProxyOptions): SlowProxy {
  const opensAt = Date.now() + (options.openAfterMs ?? 0)
  const upstreams: Socket<undefined>[] = []
  const timers = new Set<ReturnType<typeof setTimeout>>()
  let stopped = false
  const open = async (client: Socket<Link>) => {
    if (stopped) return
    // The server may be gone by now (the test ended): the client sees its connection close, as it would for real.
    const upstream = await Bun.connect({
      hostname: '127.0.0.1',
      port: target,
      socket: {
        data(_, bytes) {
          if (client.data.toClient) client.data.toClient.push(new Uint8Array(bytes))
          else client.write(bytes)
        },
        close: () => void client.end(),
      },
    }).catch(() => null)
    if (!upstream) return void client.end()
    if (stopped) return void upstream.end()
    upstreams.push(upstream)
    client.data.upstream = upstream
    for (const bytes of client.data.toServer) upstream.write(bytes)
  }
  const freeze = (client: Socket<Link>) => {
    const held: Uint8Array[] = []
    client.data.toClient = held
    setTimeout(() => {
      client.data.toClient = null
      for (const bytes of held) client.write(bytes)
    }, options.freezeMs)
  }
  const server = Bun.listen<Link>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        client.data = { writes: 0, toServer: [], toClient: null, upstream: null }
        const timer = setTimeout(
          () => {
            timers.delete(timer)
            void open(client)
          },
          Math.max(0, opensAt - Date.now()),
        )
        timers.add(timer)
      },
      data(client, bytes) {
        client.data.writes++
        if (client.data.writes === 2 && options.freezeMs) freeze(client) // write 1 is the HTTP upgrade
        if (client.data.upstream) client.data.upstream.write(bytes)
        else client.data.toServer.push(new Uint8Array(bytes))
      },
      close(client) {
        client.data.upstream?.end()
      },
    },
  })
  return {
    port: server.port,
    stop: () => {
      stopped = true
      for (const t of timers) clearTimeout(t)
      server.stop(true)
      for (const u of upstreams) u.end()
    },
  }
}
