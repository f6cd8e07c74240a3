// Ports for the servers that tests and benchmarks start come from below the kernel's ephemeral range. A port from
// listen(0) is in that range, and between the probe's close and the server's bind any process's next outgoing
// connection may take it as its local port: the likely cause of the LeRobot policy server's 300-s wait in stop 28's
// CI run.
import { describe, expect, test } from 'bun:test'
import { ephemeralRange, freePort, freePortSync } from '../../scripts/ports'

describe('free ports', () => {
  test('are below the ephemeral range, bindable, and never handed out twice', async () => {
    const { low } = ephemeralRange()
    const ports = [...(await Promise.all(Array.from({ length: 20 }, () => freePort()))), ...Array.from({ length: 20 }, () => freePortSync())]
    expect(ports.filter((p) => p < 10_000 || p >= low)).toEqual([])
    expect(new Set(ports).size).toBe(ports.length)
    for (const port of ports) Bun.serve({ port, hostname: '127.0.0.1', fetch: () => new Response() }).stop(true)
  })

  test("the range is the kernel's own", async () => {
    const text = await Bun.file('/proc/sys/net/ipv4/ip_local_port_range').text()
    const [low, high] = text.trim().split(/\s+/).map(Number)
    expect(ephemeralRange()).toEqual({ low: low!, high: high! })
  })
})
