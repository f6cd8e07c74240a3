// Webhooks, as a tenant's integrator needs them: endpoints (create with the signing secret shown once, enable or
// disable, rate limit, rotate the secret with the overlap shown, delete), a test event, the message log with every
// attempt (status, duration, the first KiB of the answer, error class), redelivery and recovery since a time, and the
// event catalogue with each type's schema and an example payload.
import { useState } from 'preact/hooks'
import { api, must, withEtag } from './api'
import type { PageProps } from './page'
import type { components } from './api-types.gen'
import { ProblemMessage } from './problem'
import { Empty, OnceSecret, Show, useAction, useLoad, when } from './ui'

type Endpoint = components['schemas']['WebhookEndpointDto']
type EventType = components['schemas']['WebhookEventTypeDto']
type EventName = components['schemas']['CreateWebhookEndpointBodyDto']['events'][number]

const catalogue = () => must(api.GET('/v1/webhook-event-types')).then((r) => r.data)

export function Webhooks(_: PageProps) {
  const [types] = useLoad(catalogue, [])
  const [list, reload] = useLoad(() => must(api.GET('/v1/webhook-endpoints', { params: { query: { pageSize: 100 } } })), [])
  const [open, setOpen] = useState<string | null>(null)
  return (
    <>
      <section aria-labelledby="endpoints-title">
        <h2 id="endpoints-title">Endpoints</h2>
        <Show loaded={list}>
          {(page) =>
            page.data.length === 0 ? (
              <Empty>No endpoint yet: add one below.</Empty>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">URL</th>
                    <th scope="col">Description</th>
                    <th scope="col">Events</th>
                    <th scope="col">State</th>
                    <th scope="col">
                      <span class="sr-only">Action</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((e) => (
                    <tr key={e.id}>
                      <td>
                        <code>{e.url}</code>
                      </td>
                      <td>{e.description ?? '—'}</td>
                      <td>{e.events.join(', ')}</td>
                      <td>{e.enabled ? 'enabled' : `disabled (${e.disabledReason ?? 'manual'})`}</td>
                      <td>
                        <button type="button" onClick={() => setOpen(e.id)} aria-label={`Open ${e.url}`}>
                          Open
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Show>
      </section>
      {open && (
        <EndpointPanel
          key={open}
          id={open}
          onClose={() => {
            setOpen(null)
            reload()
          }}
          onChanged={reload}
        />
      )}
      <Show loaded={types}>{(t) => <CreateEndpoint types={t} onCreated={reload} />}</Show>
      <section aria-labelledby="catalogue-title">
        <h2 id="catalogue-title">Event catalogue</h2>
        <Show loaded={types}>
          {(t) => (
            <ul class="catalogue">
              {t.map((e) => (
                <CatalogueEntry key={e.type} type={e} />
              ))}
            </ul>
          )}
        </Show>
      </section>
    </>
  )
}

function CreateEndpoint({ types, onCreated }: { types: EventType[]; onCreated: () => void }) {
  const [action, run] = useAction()
  const [secret, setSecret] = useState<string | null>(null)
  const create = (e: Event) => {
    e.preventDefault()
    const form = e.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const rate = String(data.get('rate') ?? '')
    const description = String(data.get('description') ?? '').trim()
    return run(async () => {
      const { data: created } = await must(
        api.POST('/v1/webhook-endpoints', {
          body: {
            url: String(data.get('url')),
            events: data.getAll('events').map(String) as EventName[],
            ...(description ? { description } : {}),
            ...(rate ? { rateLimitPerSecond: Number(rate) } : {}),
          },
        }),
      )
      form.reset()
      setSecret(created.secret)
      onCreated()
    })
  }
  return (
    <section aria-labelledby="new-endpoint-title">
      <h2 id="new-endpoint-title">Add an endpoint</h2>
      {secret ? (
        <OnceSecret label="The endpoint's signing secret" value={secret} onDone={() => setSecret(null)} />
      ) : (
        <form onSubmit={create}>
          <label for="endpoint-url">URL (HTTPS)</label>
          <input id="endpoint-url" name="url" type="url" required maxLength={2048} />
          <label for="endpoint-description">Description</label>
          <input id="endpoint-description" name="description" maxLength={500} />
          <fieldset>
            <legend>Events it receives</legend>
            {types.map((t) => (
              <label key={t.type} class="check">
                <input type="checkbox" name="events" value={t.type} /> {t.type}
              </label>
            ))}
          </fieldset>
          <label for="endpoint-rate">Deliveries per second at most (empty: no limit)</label>
          <input id="endpoint-rate" name="rate" type="number" min={1} max={1000} />
          <button type="submit" disabled={action.busy}>
            Add endpoint
          </button>
        </form>
      )}
      <ProblemMessage problem={action.problem} />
    </section>
  )
}

function EndpointPanel({ id, onClose, onChanged }: { id: string; onClose: () => void; onChanged: () => void }) {
  const path = { params: { path: { endpointId: id } } }
  const [loaded, reload] = useLoad(() => withEtag(api.GET('/v1/webhook-endpoints/{endpointId}', path)), [id])
  const [messages, reloadMessages] = useLoad(
    () => must(api.GET('/v1/webhook-endpoints/{endpointId}/messages', { params: { path: { endpointId: id }, query: { pageSize: 50 } } })),
    [id],
  )
  const [action, run] = useAction()
  const [note, setNote] = useState('')
  const [secret, setSecret] = useState<string | null>(null)
  const [shown, setShown] = useState<string | null>(null)
  const [confirming, setConfirming] = useState(false)

  const done = (message: string) => {
    setNote(message)
    reload()
    reloadMessages()
    onChanged()
  }
  const change = (etag: string, body: components['schemas']['UpdateWebhookEndpointBodyDto'], message: string) =>
    run(async () => {
      await must(api.PATCH('/v1/webhook-endpoints/{endpointId}', { ...path, headers: { 'if-match': etag }, body }))
      done(message)
    })
  const sendTest = () =>
    run(async () => {
      const { data } = await must(api.POST('/v1/webhook-endpoints/{endpointId}/test-events', path))
      done(`Test event sent (message ${data.webhookId}).`)
    })
  const rotate = () =>
    run(async () => {
      const { data } = await must(api.POST('/v1/webhook-endpoints/{endpointId}/secret-rotations', path))
      setSecret(data.secret)
      done(`Secret rotated: the previous one still signs until ${when(data.previousSecretExpiresAt)}.`)
    })
  const recover = (e: Event) => {
    e.preventDefault()
    const since = String(new FormData(e.currentTarget as HTMLFormElement).get('since'))
    return run(async () => {
      const { data } = await must(api.POST('/v1/webhook-endpoints/{endpointId}/recoveries', { ...path, body: { since: new Date(since).toISOString() } }))
      done(`${data.redelivered} failed ${data.redelivered === 1 ? 'message' : 'messages'} sent again.`)
    })
  }
  const remove = (etag: string) =>
    run(async () => {
      await must(api.DELETE('/v1/webhook-endpoints/{endpointId}', { ...path, headers: { 'if-match': etag } }))
      onClose()
    })

  return (
    <section aria-labelledby="endpoint-title" class="panel">
      <Show loaded={loaded}>
        {({ body: { data: e }, etag }) => (
          <>
            <h2 id="endpoint-title">
              Endpoint <code>{e.url}</code>
            </h2>
            <p>
              {e.description ?? 'No description.'} {e.enabled ? 'Enabled.' : `Disabled (${e.disabledReason ?? 'manual'}) since ${when(e.disabledAt)}.`} Rate
              limit: {e.rateLimitPerSecond ? `${e.rateLimitPerSecond} per second` : 'none'}.
              {e.previousSecretExpiresAt && ` The previous secret still signs until ${when(e.previousSecretExpiresAt)}.`}
            </p>
            <div class="actions">
              <button type="button" onClick={sendTest} disabled={action.busy}>
                Send test event
              </button>
              <button
                type="button"
                onClick={() => change(etag, { enabled: !e.enabled }, e.enabled ? 'Endpoint disabled.' : 'Endpoint enabled.')}
                disabled={action.busy}
              >
                {e.enabled ? 'Disable' : 'Enable'}
              </button>
              <button type="button" onClick={rotate} disabled={action.busy}>
                Rotate secret
              </button>
              <button
                type="button"
                onClick={() => {
                  reload()
                  reloadMessages()
                }}
              >
                Refresh
              </button>
              <button type="button" onClick={onClose}>
                Close
              </button>
            </div>
            {note && (
              <p role="status" class="ok">
                {note}
              </p>
            )}
            {secret && <OnceSecret label="The new signing secret" value={secret} onDone={() => setSecret(null)} />}
            <ProblemMessage problem={action.problem} />
            <RateLimit key={etag} endpoint={e} onSave={(rate) => change(etag, { rateLimitPerSecond: rate }, 'Rate limit saved.')} busy={action.busy} />
            <form onSubmit={recover} class="inline">
              <label for="recover-since">Send every failed message again, created since</label>
              <input id="recover-since" name="since" type="datetime-local" required />
              <button type="submit" disabled={action.busy}>
                Recover
              </button>
            </form>
            <h3>Messages</h3>
            <Show loaded={messages}>
              {(page) =>
                page.data.length === 0 ? (
                  <Empty>No message yet: send a test event.</Empty>
                ) : (
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">Event</th>
                        <th scope="col">Status</th>
                        <th scope="col">Attempts</th>
                        <th scope="col">Last attempt</th>
                        <th scope="col">
                          <span class="sr-only">Action</span>
                        </th>
                      </tr>
                    </thead>
                    <tbody>
                      {page.data.map((m) => (
                        <tr key={m.id}>
                          <td>{m.eventType}</td>
                          <td>{m.status}</td>
                          <td>{m.attemptCount}</td>
                          <td>{when(m.lastAttemptAt)}</td>
                          <td>
                            <button type="button" onClick={() => setShown(m.id)} aria-label={`Attempts of ${m.webhookId}`}>
                              Attempts
                            </button>
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                )
              }
            </Show>
            {shown && <Attempts key={shown} endpointId={id} messageId={shown} onRedelivered={() => done('Message sent again.')} />}
            {confirming ? (
              <p>
                Delete this endpoint? Nothing more is sent to it.{' '}
                <button type="button" class="danger" onClick={() => remove(etag)} disabled={action.busy}>
                  Confirm deletion
                </button>{' '}
                <button type="button" onClick={() => setConfirming(false)}>
                  Keep
                </button>
              </p>
            ) : (
              <p>
                <button type="button" class="danger" onClick={() => setConfirming(true)}>
                  Delete endpoint
                </button>
              </p>
            )}
          </>
        )}
      </Show>
    </section>
  )
}

function RateLimit({ endpoint, onSave, busy }: { endpoint: Endpoint; onSave: (rate: number | null) => void; busy: boolean }) {
  const [rate, setRate] = useState(endpoint.rateLimitPerSecond ? String(endpoint.rateLimitPerSecond) : '')
  const save = (e: Event) => {
    e.preventDefault()
    onSave(rate ? Number(rate) : null)
  }
  return (
    <form onSubmit={save} class="inline">
      <label for="rate-limit">Deliveries per second at most (empty: no limit)</label>
      <input id="rate-limit" type="number" min={1} max={1000} value={rate} onInput={(e) => setRate(e.currentTarget.value)} />
      <button type="submit" disabled={busy}>
        Save rate limit
      </button>
    </form>
  )
}

function Attempts({ endpointId, messageId, onRedelivered }: { endpointId: string; messageId: string; onRedelivered: () => void }) {
  const path = { params: { path: { endpointId, messageId } } }
  const [loaded, reload] = useLoad(() => must(api.GET('/v1/webhook-endpoints/{endpointId}/messages/{messageId}', path)), [messageId])
  const [action, run] = useAction()
  const redeliver = () =>
    run(async () => {
      await must(api.POST('/v1/webhook-endpoints/{endpointId}/messages/{messageId}/redeliveries', path))
      reload()
      onRedelivered()
    })
  return (
    <div class="attempts">
      <Show loaded={loaded}>
        {({ data: { message, attempts } }) => (
          <>
            <h4>
              Attempts of {message.webhookId} ({message.eventType}, {message.status})
            </h4>
            {attempts.length === 0 ? (
              <Empty>Not attempted yet.</Empty>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Answer</th>
                    <th scope="col">Duration</th>
                    <th scope="col">Error</th>
                    <th scope="col">Body (first KiB)</th>
                  </tr>
                </thead>
                <tbody>
                  {attempts.map((a) => (
                    <tr key={a.id}>
                      <td>{when(a.attemptedAt)}</td>
                      <td>
                        {a.responseStatus ?? '—'} {a.succeeded ? 'ok' : 'failed'}
                      </td>
                      <td>{a.durationMs} ms</td>
                      <td>{a.errorClass ?? '—'}</td>
                      <td>
                        <pre>{a.responseBody ?? ''}</pre>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            <button type="button" onClick={redeliver} disabled={action.busy}>
              Redeliver
            </button>
            <ProblemMessage problem={action.problem} />
          </>
        )}
      </Show>
    </div>
  )
}

function CatalogueEntry({ type }: { type: EventType }) {
  return (
    <li>
      <details>
        <summary>
          <code>{type.type}</code>: {type.summary}
        </summary>
        <h4>
          Schema of <code>data</code>
        </h4>
        <pre>{JSON.stringify(type.dataSchema, null, 2)}</pre>
        <h4>Example payload</h4>
        <pre>
          {JSON.stringify({ id: 'evt_…', type: type.type, timestamp: '2026-01-01T00:00:00Z', tenantId: '…', data: exampleOf(type.dataSchema) }, null, 2)}
        </pre>
      </details>
    </li>
  )
}

type Schema = {
  type?: string | string[]
  const?: unknown
  enum?: unknown[]
  examples?: unknown[]
  format?: string
  properties?: Record<string, Schema>
  items?: Schema
  anyOf?: Schema[]
}

/** A value of the schema, for reading: its own example, a constant, the first choice, or a placeholder by type. */
function exampleOf(s: Schema): unknown {
  if (s.examples?.length) return s.examples[0]
  if (s.const !== undefined) return s.const
  if (s.enum?.length) return s.enum[0]
  if (s.anyOf?.length) return exampleOf(s.anyOf[0]!)
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type
  if (type === 'object') return Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, exampleOf(v)]))
  if (type === 'array') return s.items ? [exampleOf(s.items)] : []
  if (type === 'integer' || type === 'number') return 0
  if (type === 'boolean') return true
  if (s.format === 'date-time') return '2026-01-01T00:00:00Z'
  if (s.format === 'uuid') return '00000000-0000-4000-8000-000000000000'
  return type === 'string' ? 'string' : null
}
