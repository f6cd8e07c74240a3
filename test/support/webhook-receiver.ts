// A webhook receiver as a tenant would run one: HTTPS with a certificate signed by a CA the test (or benchmark)
// makes, verifying every delivery with the stock `standardwebhooks` npm package. Shared by test/webhooks and bench/.
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:https'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'

/** A CA the test makes, and a server certificate it signed for localhost, 127.0.0.1 and 127.0.0.2. */
export function makeCertificates(dir: string) {
  const run = (...args: string[]) => {
    const r = Bun.spawnSync(['openssl', ...args], { cwd: dir })
    if (r.exitCode !== 0) throw new Error(`openssl ${args[0]}: ${r.stderr.toString()}`)
  }
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
  run(
    'req',
    '-x509',
    ...ec,
    '-days',
    '1',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-subj',
    '/CN=rcp webhook test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign',
  )
  run('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost')
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:127.0.0.2\n')
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-out', 'server.pem', '-extfile', 'san.ext')
  return { caFile: join(dir, 'ca.pem'), keyFile: join(dir, 'server.key'), certFile: join(dir, 'server.pem') }
}

export interface Delivery {
  webhookId: string
  timestamp: number
  signatures: string[]
  body: { id: string; type: string; timestamp: string; tenantId: string; data: Record<string, unknown> }
  /** Which of the receiver's secrets verified it with the stock library. */
  verifiedBy: number[]
  /** Every header name the request carried (lower case). */
  headerNames: string[]
  at: number
}

export type Answer = { status: number; headers?: Record<string, string>; body?: string }

/** An HTTPS receiver on 127.0.0.1 (or `host`). Every request is verified with `standardwebhooks` against each of
 *  `secrets` and recorded; `answer` decides the response (204 by default). It can go down and come back. */
export class Receiver {
  deliveries: Delivery[] = []
  secrets: string[] = []
  answer: (d: Delivery) => Answer = () => ({ status: 204 })
  /** How long each answer takes (a slow receiver). */
  delayMs = 0
  port = 0
  private server?: Server

  constructor(
    private certs: { keyFile: string; certFile: string },
    private host = '127.0.0.1',
  ) {}

  async start(port = this.port): Promise<this> {
    this.server = createServer({ key: readFileSync(this.certs.keyFile), cert: readFileSync(this.certs.certFile) }, (req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(req.headers[h] ?? '')]))
        const verifiedBy = this.secrets.flatMap((s, i) => {
          try {
            new Webhook(s).verify(raw, headers)
            return [i]
          } catch {
            return []
          }
        })
        const d: Delivery = {
          webhookId: headers['webhook-id']!,
          timestamp: Number(headers['webhook-timestamp']),
          signatures: headers['webhook-signature']!.split(' '),
          body: JSON.parse(raw),
          verifiedBy,
          headerNames: Object.keys(req.headers),
          at: Date.now(),
        }
        this.deliveries.push(d)
        const a = this.answer(d)
        setTimeout(() => res.writeHead(a.status, a.headers).end(a.body ?? ''), this.delayMs)
      })
    })
    await new Promise<void>((resolve) => this.server!.listen(port, this.host, resolve))
    this.port = (this.server.address() as { port: number }).port
    return this
  }

  async stop() {
    const s = this.server
    this.server = undefined
    if (s)
      await new Promise<void>((resolve) => {
        s.close(() => resolve())
        s.closeAllConnections()
      })
  }

  url(path = '/hook', host = this.host) {
    return `https://${host}:${this.port}${path}`
  }

  of(type: string) {
    return this.deliveries.filter((d) => d.body.type === type)
  }
}
