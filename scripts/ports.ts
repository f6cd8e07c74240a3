// Ports for servers started on this machine: free ones for tests and benchmarks, and a clear error for fixed ones.
import { createServer, type AddressInfo } from 'node:net'

const handedOut = new Set<number>()

/** A port nobody listens on right now; never the same one twice in this process. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer()
      server.on('error', reject)
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo
        server.close(() => resolve(port))
      })
    })
    if (!handedOut.has(port)) {
      handedOut.add(port)
      return port
    }
  }
}

/** Fails fast, naming the variable to change, instead of letting a server die on EADDRINUSE in its log. */
export async function assertPortFree(port: number, what: string, envName: string) {
  const taken = await new Promise<boolean>((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(true))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)))
  })
  if (taken) throw new Error(`port ${port} (${what}) is already in use; free it or set ${envName} to another port`)
}
