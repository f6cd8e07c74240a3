// The subscription as its billing admin manages it: state, plan and period; a plan change priced before it is confirmed
// (from the deployment's price book and this period's usage so far, in integer minor units); cancel at the period's
// end or undo it; pause and resume. A move the state table refuses (409) is explained with the state it met.
import { useState } from 'preact/hooks'
import { api, must, withEtag } from './api'
import type { components } from './api-types.gen'
import { formatMoney, formatQuantity, meterCharge } from './money'
import type { PageProps } from './page'
import { type Problem, ProblemMessage } from './problem'
import { Show, StaleNotice, useLoad, useVersionedAction, when } from './ui'

type Subscription = components['schemas']['SubscriptionDto']
type PriceBook = components['schemas']['PriceBookDto']
type Plan = PriceBook['plans'][number]
type Totals = components['schemas']['UsageSummaryDto']['totals']

const STATUS: Record<Subscription['status'], string> = {
  trialing: 'Trialing',
  active: 'Active',
  past_due: 'Past due: a payment failed; the grace period runs until the date below',
  unpaid: 'Unpaid: the grace period ended without payment; new work is blocked',
  canceled: 'Canceled: final; new work is blocked',
  paused: 'Paused: new work is blocked until it is resumed',
}

async function loadSubscription() {
  const sub = await withEtag(api.GET('/v1/tenants/current/subscription'))
  const period = sub.body.data.currentPeriod
  const [book, usage] = await Promise.all([
    must(api.GET('/v1/tenants/current/price-book')),
    must(api.GET('/v1/tenants/current/usage-summary', { params: { query: { scope: 'tenant', from: period.start, to: period.end } } })),
  ])
  return { subscription: sub.body.data, etag: sub.etag, book: book.data, totals: usage.data.totals }
}

export function SubscriptionPage({ can, reloadMe }: PageProps) {
  const [loaded, reload] = useLoad(loadSubscription, [])
  const [action, change, stale] = useVersionedAction(reload)
  const [note, setNote] = useState('')
  const [refusal, setRefusal] = useState<{ problem: Problem; what: string; status: string } | null>(null)
  const write = can('billing:write')

  const patch = (s: Subscription, etag: string, body: components['schemas']['UpdateSubscriptionBodyDto'], what: string, done: string) =>
    change(async () => {
      setNote('')
      setRefusal(null)
      try {
        await must(api.PATCH('/v1/tenants/current/subscription', { params: { header: { 'If-Match': etag } }, body }))
      } catch (err) {
        const problem = err as Problem
        if (problem.code === 'BILLING_STATE_TRANSITION_INVALID') {
          setRefusal({ problem, what, status: s.status })
          reload()
          return
        }
        throw err
      }
      setNote(done)
      reload()
      reloadMe() // the billing block shown on every page may have started or ended
    })

  return (
    <Show loaded={loaded}>
      {({ subscription: s, etag, book, totals }) => (
        <>
          <section aria-labelledby="subscription-state">
            <h2 id="subscription-state">State</h2>
            <dl class="facts">
              <dt>Status</dt>
              <dd id="subscription-status">{STATUS[s.status]}</dd>
              <dt>Plan</dt>
              <dd id="subscription-plan">
                {s.planName ?? s.planId}
                {s.monthlyFee !== null && <> · {formatMoney(BigInt(s.monthlyFee), s.currency)} a month</>}
              </dd>
              <dt>Current period</dt>
              <dd>
                {s.currentPeriod.period}: {when(s.currentPeriod.start)} to {when(s.currentPeriod.end)}
              </dd>
              <dt>At the period's end</dt>
              <dd id="subscription-renewal">{s.status === 'canceled' ? 'Ended' : s.cancelAtPeriodEnd ? 'Cancels' : 'Renews'}</dd>
              {s.graceEndsAt && (
                <>
                  <dt>Grace period ends</dt>
                  <dd>{when(s.graceEndsAt)}</dd>
                </>
              )}
            </dl>
          </section>
          {note && (
            <p role="status" class="ok">
              {note}
            </p>
          )}
          {refusal && <Refused {...refusal} />}
          <StaleNotice problem={stale} what="subscription" />
          <ProblemMessage problem={action.problem} />
          {write && s.status !== 'canceled' && (
            <section aria-labelledby="subscription-actions">
              <h2 id="subscription-actions">Change</h2>
              <div class="actions">
                {s.cancelAtPeriodEnd ? (
                  <button
                    type="button"
                    disabled={action.busy}
                    onClick={() => patch(s, etag, { cancelAtPeriodEnd: false }, 'keep renewing', 'The subscription renews at the period’s end again.')}
                  >
                    Keep renewing
                  </button>
                ) : (
                  <button
                    type="button"
                    class="danger"
                    disabled={action.busy}
                    onClick={() => patch(s, etag, { cancelAtPeriodEnd: true }, 'cancel at the period’s end', 'The subscription cancels at the period’s end.')}
                  >
                    Cancel at period end
                  </button>
                )}
                {s.status === 'paused' ? (
                  <button type="button" disabled={action.busy} onClick={() => patch(s, etag, { status: 'active' }, 'resume', 'Subscription resumed.')}>
                    Resume
                  </button>
                ) : (
                  <button type="button" disabled={action.busy} onClick={() => patch(s, etag, { status: 'paused' }, 'pause', 'Subscription paused.')}>
                    Pause
                  </button>
                )}
              </div>
              <ChangePlan
                key={etag}
                subscription={s}
                book={book}
                totals={totals}
                busy={action.busy}
                onConfirm={(plan) => patch(s, etag, { planId: plan.id }, `change to the plan ${plan.name}`, `Plan changed to ${plan.name}.`)}
              />
            </section>
          )}
        </>
      )}
    </Show>
  )
}

/** A 409 from the state table, said in the reader's terms: what was asked, the state it met, and what that state allows. */
function Refused({ problem, what, status }: { problem: Problem; what: string; status: string }) {
  const allows: Record<string, string> = {
    past_due: 'While a payment is overdue the plan stays and the subscription cannot be paused: a recorded payment makes it active again.',
    unpaid: 'An unpaid subscription keeps its plan and cannot be paused: a recorded payment makes it active again.',
    paused: 'A paused subscription keeps its plan: resume it first.',
    canceled: 'A canceled subscription is final: nothing changes it.',
  }
  return (
    <div class="problem" role="alert">
      <p>
        <strong>
          The subscription could not {what}: it is {status.replace('_', ' ')}.
        </strong>{' '}
        {allows[status] ?? ''}
      </p>
      <p>
        {problem.message} <span class="code">({problem.code})</span>
      </p>
    </div>
  )
}

/** The plan's charges at this period's usage so far: its fee and each priced meter's line, as the close computes them. */
function charges(plan: Plan, totals: Totals) {
  const used = new Map(totals.map((t) => [t.meter, BigInt(t.quantity)]))
  const lines = new Map(plan.meters.map((m) => [m.meter, meterCharge(used.get(m.meter) ?? 0n, m)]))
  return { fee: BigInt(plan.monthlyFee), lines, total: [...lines.values()].reduce((a, b) => a + b, BigInt(plan.monthlyFee)) }
}

function ChangePlan({
  subscription: s,
  book,
  totals,
  busy,
  onConfirm,
}: {
  subscription: Subscription
  book: PriceBook
  totals: Totals
  busy: boolean
  onConfirm: (plan: Plan) => void
}) {
  const others = book.plans.filter((p) => p.id !== s.planId)
  const [chosen, setChosen] = useState<string>('')
  const current = book.plans.find((p) => p.id === s.planId)
  const next = book.plans.find((p) => p.id === chosen)
  if (others.length === 0) return null
  const money = (m: bigint, signed = false) => formatMoney(m, book.currency, signed)
  const meters = [...new Set([...(current?.meters ?? []), ...(next?.meters ?? [])].map((m) => m.meter))]
  const quantity = (meter: string) => totals.find((t) => t.meter === meter)?.quantity ?? '0'
  const before = current && charges(current, totals)
  const after = next && charges(next, totals)
  return (
    <form
      class="plan-change"
      onSubmit={(e) => {
        e.preventDefault()
        if (next) onConfirm(next)
      }}
    >
      <label for="new-plan">New plan</label>
      <select id="new-plan" value={chosen} onChange={(e) => setChosen(e.currentTarget.value)}>
        <option value="">Choose a plan…</option>
        {others.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name} ({money(BigInt(p.monthlyFee))} a month)
          </option>
        ))}
      </select>
      {next && (
        <>
          <table id="price-difference">
            <caption>
              What the period {s.currentPeriod.period} would cost at its close, at the usage recorded so far (the new plan prices the whole period)
            </caption>
            <thead>
              <tr>
                <th scope="col">Item</th>
                <th scope="col">{current?.name ?? s.planId} (now)</th>
                <th scope="col">{next.name}</th>
                <th scope="col">Difference</th>
              </tr>
            </thead>
            <tbody>
              <tr>
                <th scope="row">Monthly fee</th>
                <td class="n">{before ? money(before.fee) : '—'}</td>
                <td class="n">{money(after!.fee)}</td>
                <td class="n">{before ? money(after!.fee - before.fee, true) : '—'}</td>
              </tr>
              {meters.map((meter) => {
                const a = before?.lines.get(meter) ?? 0n
                const b = after!.lines.get(meter) ?? 0n
                return (
                  <tr key={meter}>
                    <th scope="row">
                      <code>{meter}</code> ({formatQuantity(quantity(meter))} so far)
                    </th>
                    <td class="n">{money(a)}</td>
                    <td class="n">{money(b)}</td>
                    <td class="n">{money(b - a, true)}</td>
                  </tr>
                )
              })}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row">Total</th>
                <td class="n">{before ? money(before.total) : '—'}</td>
                <td class="n">{money(after!.total)}</td>
                <td class="n" id="price-difference-total">
                  {before ? money(after!.total - before.total, true) : '—'}
                </td>
              </tr>
            </tfoot>
          </table>
          <button type="submit" disabled={busy}>
            Confirm the change to {next.name}
          </button>
        </>
      )}
    </form>
  )
}
