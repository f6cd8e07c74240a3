// rcp webhooks listen: a local receiver for development, like `stripe listen` and `svix listen`. It checks each
// delivery's Standard Webhooks signature (webhook-id, webhook-timestamp, webhook-signature: HMAC-SHA256 with the
// endpoint's secret, within five minutes) and prints the events. The platform delivers over HTTPS only and its
// outbound guard refuses loopback and private addresses unless the deployment lets them through
// (OUTBOUND_ALLOW_PRIVATE_CIDRS, and OUTBOUND_CA_FILE for a local CA's certificate), so the receiver serves TLS with
// --cert/--key; against a deployment that allows neither, put a tunnel with a public HTTPS URL in front (--url).
import { createHmac, timingSafeEqual } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { RcpError, type components } from '../ts'
import type { Command } from './context'
import { CliError, describeError, EXIT, exitCodeOf, usage } from './exit'

type EventType = components['schemas']['CreateWebhookEndpointBodyDto']['events'][number]

/** Standard Webhooks' tolerance for the timestamp, either way. */
export const TOLERANCE_S = 300

export type Verdict = { ok: true; event: { id?: string; type?: string; timestamp?: string; data?: unknown } } | { ok: false; reason: string }

export function verifyDelivery(secret: string, headers: Headers, body: string, nowS = Math.floor(Date.now() / 1000)): Verdict {
  const id = headers.get('webhook-id')
  const timestamp = headers.get('webhook-timestamp')
  const signatures = headers.get('webhook-signature')
  if (!id || !timestamp || !signatures) return { ok: false, reason: 'missing webhook-id, webhook-timestamp or webhook-signature' }
  const ts = Number(timestamp)
  if (!Number.isInteger(ts) || Math.abs(nowS - ts) > TOLERANCE_S) return { ok: false, reason: 'webhook-timestamp is not within five minutes of now' }
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest()
  const match = signatures.split(' ').some((s) => {
    const [version, sig] = s.split(',')
    if (version !== 'v1' || !sig) return false
    const given = Buffer.from(sig, 'base64')
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
  if (!match) return { ok: false, reason: 'no signature matches the secret' }
  try {
    return { ok: true, event: JSON.parse(body) }
  } catch {
    return { ok: false, reason: 'the body is not JSON' }
  }
}

export async function listen(cmd: Command): Promise<void> {
  const f = cmd.flags
  const host = f.string('host') ?? '127.0.0.1'
  const port = f.int('port', 0, 65535) ?? 0
  const certFile = f.string('cert')
  const keyFile = f.string('key')
  const register = f.bool('register')
  const givenUrl = f.string('url')
  const events = f.string('events')
  let endpointId = f.string('endpoint')
  let secret = f.string('secret') ?? process.env.RCP_WEBHOOK_SECRET
  const sendTest = f.bool('test-event')
  const count = f.int('count', 1, 1_000_000)
  f.done()
  if ((certFile === undefined) !== (keyFile === undefined)) throw usage('--cert and --key go together')
  if (register && secret) throw usage('--register makes an endpoint and takes its secret; --secret is for an endpoint you made')
  if (!register && !secret) throw usage('pass --secret whsec_… (or RCP_WEBHOOK_SECRET) for an existing endpoint, or --register --events … to make one')
  if (register && !events) throw usage('--register needs --events (comma-separated event types)')
  if (sendTest && !register && !endpointId) throw usage('--test-event needs the endpoint: --endpoint <id>, or --register')
  if (register && !givenUrl && !certFile) throw usage('--register needs an HTTPS URL the platform can reach: --cert/--key (served here) or --url (a tunnel)')

  let failures = 0
  let verified = 0
  let finish: () => void = () => {}
  const finished = new Promise<void>((r) => {
    finish = r
  })
  const server = Bun.serve({
    hostname: host,
    port,
    ...(certFile && keyFile ? { tls: { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') } } : {}),
    fetch: async (req) => {
      if (req.method !== 'POST') return new Response('rcp webhooks listen: POST deliveries here\n', { status: 405 })
      const body = await req.text()
      const verdict = verifyDelivery(secret!, req.headers, body)
      if (!verdict.ok) {
        failures++
        cmd.out.note(`refused a delivery (${req.headers.get('webhook-id') ?? 'no webhook-id'}): ${verdict.reason}`)
        return new Response(null, { status: 401 })
      }
      verified++
      const e = verdict.event
      const line = cmd.out.json
        ? JSON.stringify({ webhookId: req.headers.get('webhook-id'), verified: true, event: e })
        : `${e.timestamp ?? '-'}  ${e.type ?? '-'}  ${e.id ?? '-'}  verified  ${JSON.stringify(e.data ?? null)}`
      process.stdout.write(`${line}\n`)
      if (count !== undefined && verified >= count) queueMicrotask(finish)
      return new Response(null, { status: 204 })
    },
  })
  const localUrl = `${certFile ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${server.port}/`
  cmd.out.note(`Listening on ${localUrl}`)
  const stop = () => finish()
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)

  let rcp: ReturnType<Command['client']>['rcp'] | null = null
  let removal: unknown
  try {
    if (register || sendTest) rcp = cmd.client().rcp
    if (register) {
      const url = givenUrl ?? localUrl
      const made = (
        await rcp!.POST('/v1/webhook-endpoints', {
          body: { url, events: events!.split(',').map((e) => e.trim()) as EventType[], description: 'rcp webhooks listen' },
        })
      ).data.data
      endpointId = made.endpoint.id
      secret = made.secret
      cmd.out.note(`Registered endpoint ${endpointId} for ${url}; it is deleted when this stops`)
    }
    if (sendTest) {
      await rcp!.POST('/v1/webhook-endpoints/{endpointId}/test-events', { params: { path: { endpointId: endpointId! } } })
      cmd.out.note(`Asked for a test event on ${endpointId}`)
    }
    await finished
  } finally {
    server.stop(true)
    // A removal that fails is said and fails the command: an endpoint left behind goes on receiving deliveries. One
    // already gone (404) is what was wanted.
    if (register && endpointId && rcp) {
      const id = endpointId
      removal = await rcp.DELETE('/v1/webhook-endpoints/{endpointId}', { params: { path: { endpointId: id } } }).then(
        () => undefined,
        (e: unknown) => (e instanceof RcpError && e.status === 404 ? undefined : e),
      )
      if (removal) cmd.out.note(`could not remove endpoint ${id}: ${describeError(removal)}; remove it with DELETE /v1/webhook-endpoints/${id}`)
    }
  }
  if (removal) throw new CliError(exitCodeOf(removal), `endpoint ${endpointId} was not removed`)
  if (failures > 0) throw new CliError(EXIT.verification, `${failures} delivery(ies) failed signature verification`)
}
