// Invoices: the finalized ones, newest first, and one of them with its lines as the snapshot holds them. The page to
// send to accounts payable is the API's own rendering (its document), opened as it is, never re-drawn here.
import { useState } from 'preact/hooks'
import { api, must } from './api'
import type { components } from './api-types.gen'
import { formatMoney, formatQuantity } from './money'
import type { PageProps } from './page'
import { Empty, Show, useLoad, usePaging, when } from './ui'

type Invoice = components['schemas']['InvoiceDto']

const STATUS: Record<Invoice['status'], string> = { open: 'Open (unpaid)', paid: 'Paid', void: 'Void' }

export function Invoices(_: PageProps) {
  const { pageToken, pager } = usePaging([])
  const [list] = useLoad(
    () => must(api.GET('/v1/tenants/current/invoices', { params: { query: { pageSize: 25, ...(pageToken ? { pageToken } : {}) } } })),
    [pageToken],
  )
  const [open, setOpen] = useState<string | null>(null)
  return (
    <>
      <Show loaded={list}>
        {(page) =>
          page.data.length === 0 ? (
            <Empty>No invoice yet: the first is finalized when the current period ends.</Empty>
          ) : (
            <>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Period</th>
                    <th scope="col">Plan</th>
                    <th scope="col">Total</th>
                    <th scope="col">Status</th>
                    <th scope="col">Finalized</th>
                    <th scope="col">
                      <span class="sr-only">Action</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {page.data.map((i) => (
                    <tr key={i.id}>
                      <td>{i.period}</td>
                      <td>{i.planId}</td>
                      <td class="n">{formatMoney(BigInt(i.total), i.currency)}</td>
                      <td>{STATUS[i.status]}</td>
                      <td>{when(i.finalizedAt)}</td>
                      <td>
                        <button type="button" onClick={() => setOpen(i.id)} aria-label={`Open the invoice of ${i.period}`}>
                          Open
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {pager(page.nextPageToken ?? undefined)}
            </>
          )
        }
      </Show>
      {open && <InvoiceView key={open} id={open} onClose={() => setOpen(null)} />}
    </>
  )
}

function InvoiceView({ id, onClose }: { id: string; onClose: () => void }) {
  const [loaded] = useLoad(() => must(api.GET('/v1/tenants/current/invoices/{invoiceId}', { params: { path: { invoiceId: id } } })), [id])
  return (
    <section aria-labelledby="invoice-title" class="panel">
      <Show loaded={loaded}>
        {({ data: inv }) => {
          const money = (minor: string) => formatMoney(BigInt(minor), inv.currency)
          return (
            <>
              <h2 id="invoice-title">Invoice {inv.period}</h2>
              <p>
                {STATUS[inv.status]} · plan {inv.planId} · {when(inv.periodStart)} to {when(inv.periodEnd)} · finalized {when(inv.finalizedAt)}
                {inv.paidAt && <> · paid {when(inv.paidAt)}</>}
              </p>
              <table>
                <thead>
                  <tr>
                    <th scope="col">Item</th>
                    <th scope="col">Quantity</th>
                    <th scope="col">Included</th>
                    <th scope="col">Billable</th>
                    <th scope="col">Unit price (minor units)</th>
                    <th scope="col">Amount</th>
                  </tr>
                </thead>
                <tbody>
                  {inv.lines.map((l, n) => (
                    <tr key={n}>
                      <th scope="row">{l.description}</th>
                      <td class="n">{formatQuantity(l.quantity)}</td>
                      <td class="n">{formatQuantity(l.included)}</td>
                      <td class="n">{formatQuantity(l.billable)}</td>
                      <td class="n">
                        {l.unitPrice}
                        {l.per === '1' ? '' : ` per ${formatQuantity(l.per)}`}
                      </td>
                      <td class="n">{money(l.amount)}</td>
                    </tr>
                  ))}
                </tbody>
                <tfoot>
                  <tr>
                    <th scope="row" colSpan={5}>
                      Total
                    </th>
                    <td class="n" id="invoice-total">
                      {money(inv.total)}
                    </td>
                  </tr>
                </tfoot>
              </table>
              <p class="muted">
                Snapshot hash (sha256): <code>{inv.hash}</code>
              </p>
              <p>
                <a href={`/v1/tenants/current/invoices/${encodeURIComponent(inv.id)}/document`} target="_blank" rel="noopener">
                  The invoice as a page for accounts payable (opens in a new tab)
                </a>{' '}
                <button type="button" onClick={onClose}>
                  Close
                </button>
              </p>
            </>
          )
        }}
      </Show>
    </section>
  )
}
