// Signed deliveries as real receivers see them: verified by the stock standardwebhooks packages (npm 1.1.1 in a
// Node receiver, PyPI 1.1.0 in a Python one), during a secret rotation's overlap too; test events reach one
// endpoint only; a rolled-back change delivers nothing; the delivery routes are tenant-isolated.
import { describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { publishEvent } from '../../api/events/service'
import { patFor, tenantOwner } from '../support/fixtures'
import { eventually } from '../support/temporal'
import { messagesOf, publish, Receiver, settled, trainingDone, useDeliveryEnv, webhookTenant } from './delivery-helpers'

const env = useDeliveryEnv()

/** A venv with the pinned PyPI standardwebhooks, cached under ~/.cache/rcp by the requirements' hash. */
function pythonWithStandardWebhooks(): string {
  const requirements = join(import.meta.dir, 'python-requirements.txt')
  const hash = createHash('sha256').update(readFileSync(requirements)).digest('hex').slice(0, 12)
  const venv = join(process.env.RCP_CACHE_DIR ?? join(homedir(), '.cache', 'rcp'), `venv-standardwebhooks-${hash}`)
  const python = join(venv, 'bin', 'python')
  if (!existsSync(python)) {
    for (const cmd of [
      ['python3', '-m', 'venv', venv],
      [python, '-m', 'pip', 'install', '-q', '--require-hashes', '-r', requirements],
    ]) {
      const r = Bun.spawnSync(cmd)
      if (r.exitCode !== 0) throw new Error(`${cmd.join(' ')}: ${r.stderr.toString()}`)
    }
  }
  return python
}

/** The Python receiver: its port, the file of secrets it verifies with, and the JSON lines it printed so far. */
async function pythonReceiver() {
  const secretsFile = join(env.dir, `py-secrets-${crypto.randomUUID()}`)
  writeFileSync(secretsFile, '')
  const proc = Bun.spawn([pythonWithStandardWebhooks(), join(import.meta.dir, 'receiver.py'), env.certs.certFile, env.certs.keyFile, secretsFile], {
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const lines: string[] = []
  let buffered = ''
  void (async () => {
    const reader = proc.stdout.getReader()
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      buffered += new TextDecoder().decode(r.value)
      const parts = buffered.split('\n')
      buffered = parts.pop()!
      lines.push(...parts)
    }
  })()
  const port = Number(await eventually('the Python receiver to listen', async () => lines[0]))
  return {
    url: `https://127.0.0.1:${port}/hook`,
    proc,
    trust: (secrets: string[]) => writeFileSync(secretsFile, secrets.join('\n')),
    seen: () => lines.slice(1).map((l) => JSON.parse(l) as { webhookId: string; type: string; verifiedBy: number[] }),
  }
}

describe('signed deliveries', () => {
  test('the stock npm and PyPI standardwebhooks verify every delivery; one webhook-id per message; the envelope is whole', async () => {
    const t = await webhookTenant(env.api)
    const node = await new Receiver(env.certs).start()
    const nodeEp = await t.register({ url: node.url(), events: ['training_job.completed'] })
    node.secrets = [nodeEp.secret]
    const py = await pythonReceiver()
    try {
      const pyEp = await t.register({ url: py.url, events: ['training_job.completed'] })
      py.trust([pyEp.secret])
      const data = trainingDone()
      const ids = await publish(env.api, t.tenantId, 'training_job.completed', () => data, 3)
      await settled(env.api, nodeEp.id, 3)
      expect(node.deliveries.map((d) => d.verifiedBy)).toEqual([[0], [0], [0]])
      expect(node.deliveries.map((d) => d.body.id).sort()).toEqual([...ids].sort())
      expect(node.deliveries[0]!.body).toEqual({
        id: expect.any(String),
        type: 'training_job.completed',
        timestamp: expect.any(String),
        tenantId: t.tenantId,
        data,
      })
      const listed = (await t.manager.get(`/webhook-endpoints/${nodeEp.id}/messages`)).json.data
      expect(new Set(node.deliveries.map((d) => d.webhookId))).toEqual(new Set(listed.map((m: { webhookId: string }) => m.webhookId)))
      // docs/webhooks.md's statement of the header, and the header as sent: msg_ and the message id's 32 hex digits.
      const readme = await Bun.file(join(import.meta.dir, '..', '..', 'docs', 'webhooks.md')).text()
      expect(readme).toContain('`webhook-id: msg_<message id without its hyphens>`')
      const messageIds = (await messagesOf(env.api, nodeEp.id)).map((m) => m.id)
      expect(new Set(node.deliveries.map((d) => d.webhookId))).toEqual(new Set(messageIds.map((id) => `msg_${id.replaceAll('-', '')}`)))
      for (const d of node.deliveries) expect(d.webhookId).toMatch(/^msg_[0-9a-f]{32}$/)
      await settled(env.api, pyEp.id, 3)
      expect(py.seen().map((s) => s.verifiedBy)).toEqual([[0], [0], [0]])
      expect((await messagesOf(env.api, pyEp.id)).map((m) => m.status)).toEqual(['succeeded', 'succeeded', 'succeeded'])
    } finally {
      py.proc.kill()
      await node.stop()
    }
  }, 90_000)

  test('during a rotation overlap every delivery carries two signatures, and receivers on either secret verify it', async () => {
    const t = await webhookTenant(env.api)
    const node = await new Receiver(env.certs).start()
    const py = await pythonReceiver()
    try {
      const nodeEp = await t.register({ url: node.url(), events: ['training_job.completed'] })
      const pyEp = await t.register({ url: py.url, events: ['training_job.completed'] })
      const rotate = async (id: string) => {
        const res = await t.manager.post(`/webhook-endpoints/${id}/secret-rotations`)
        expect(res.status).toBe(201)
        return res.json.data.secret as string
      }
      const [nodeNew, pyNew] = [await rotate(nodeEp.id), await rotate(pyEp.id)]
      node.secrets = [nodeEp.secret, nodeNew, `whsec_${Buffer.alloc(32, 9).toString('base64')}`]
      py.trust([pyEp.secret, pyNew])
      await publish(env.api, t.tenantId, 'training_job.completed', trainingDone)
      await settled(env.api, nodeEp.id, 1)
      await settled(env.api, pyEp.id, 1)
      expect(node.deliveries.map((d) => [d.signatures.length, d.verifiedBy])).toEqual([[2, [0, 1]]])
      expect(py.seen().map((s) => s.verifiedBy)).toEqual([[0, 1]])
    } finally {
      py.proc.kill()
      await node.stop()
    }
  }, 60_000)

  test('a test event goes to that endpoint only, and a rolled-back change delivers nothing', async () => {
    const t = await webhookTenant(env.api)
    const a = await new Receiver(env.certs).start()
    const b = await new Receiver(env.certs).start()
    const epA = await t.register({ url: a.url(), events: ['training_job.completed', 'training_job.failed'] })
    const epB = await t.register({ url: b.url(), events: ['training_job.completed', 'training_job.failed'] })
    a.secrets = [epA.secret]
    const sent = await t.manager.post(`/webhook-endpoints/${epA.id}/test-events`)
    expect(sent.status).toBe(202)
    expect(sent.json.data).toMatchObject({ endpointId: epA.id, eventType: 'webhook_endpoint.test', webhookId: expect.stringMatching(/^msg_/) })

    const doomed = trainingDone()
    await expect(
      env.api.sql.begin(async (tx) => {
        await publishEvent(tx, t.tenantId, 'training_job.failed', { trainingJobId: doomed.trainingJobId, name: 'doomed', reason: 'rolled back' })
        throw new Error('the change failed after publishing')
      }),
    ).rejects.toThrow('the change failed')
    // A committed event after it: once that one is delivered, the dispatcher has passed where the other would be.
    await publish(env.api, t.tenantId, 'training_job.completed', trainingDone)
    await settled(env.api, epB.id, 1)
    await settled(env.api, epA.id, 2)
    expect(a.of('webhook_endpoint.test').map((d) => [d.body.data.endpointId, d.verifiedBy])).toEqual([[epA.id, [0]]])
    expect(b.of('webhook_endpoint.test')).toEqual([])
    expect([...a.deliveries, ...b.deliveries].filter((d) => d.body.type === 'training_job.failed')).toEqual([])
    expect(a.of('training_job.completed').length + b.of('training_job.completed').length).toBe(2)
    await a.stop()
    await b.stop()
  }, 60_000)

  test('messages and their attempts are listed per endpoint; another tenant sees none of it', async () => {
    const t = await webhookTenant(env.api)
    const r = await new Receiver(env.certs).start()
    r.answer = (d) => (d.body.data.name === 'bad' ? { status: 500, body: 'x'.repeat(3000) } : { status: 200, body: 'ok' })
    const ep = await t.register({ url: r.url(), events: ['training_job.completed'] })
    await publish(env.api, t.tenantId, 'training_job.completed', () => ({ ...trainingDone(), name: 'good' }))
    await publish(env.api, t.tenantId, 'training_job.completed', () => ({ ...trainingDone(), name: 'bad' }))
    await settled(env.api, ep.id, 2, 60_000)
    const failed = (await t.manager.get(`/webhook-endpoints/${ep.id}/messages?status=failed`)).json.data
    expect(failed.length).toBe(1)
    const detail = (await t.manager.get(`/webhook-endpoints/${ep.id}/messages/${failed[0].id}`)).json.data
    expect(detail.attempts.length).toBe(8) // the whole (compressed) schedule
    expect(detail.attempts[0]).toMatchObject({ succeeded: false, responseStatus: 500, errorClass: 'http_status' })
    expect(detail.attempts[0].responseBody.length).toBe(1024)
    const paged = await t.manager.get(`/webhook-endpoints/${ep.id}/messages?pageSize=1`)
    expect([paged.json.data.length, typeof paged.json.nextPageToken]).toEqual([1, 'string'])

    const other = await tenantOwner(env.api.url)
    const intruder = other.client.withBearer((await patFor(other.client, ['tenant:manage'])).token)
    const [message] = await messagesOf(env.api, ep.id)
    for (const [method, path] of [
      ['GET', `/webhook-endpoints/${ep.id}/messages`],
      ['GET', `/webhook-endpoints/${ep.id}/messages/${message!.id}`],
      ['POST', `/webhook-endpoints/${ep.id}/messages/${message!.id}/redeliveries`],
      ['POST', `/webhook-endpoints/${ep.id}/test-events`],
    ] as const) {
      const res = await intruder.call(method, path)
      expect({ path, status: res.status, code: res.json?.code }).toEqual({ path, status: 404, code: 'NOT_FOUND' })
    }
    const recover = await intruder.post(`/webhook-endpoints/${ep.id}/recoveries`, { since: new Date(0).toISOString() })
    expect([recover.status, recover.json.code]).toEqual([404, 'NOT_FOUND'])
    expect((await messagesOf(env.api, ep.id)).map((m) => m.status).sort()).toEqual(['failed', 'succeeded'])
    await r.stop()
  }, 60_000)
})
