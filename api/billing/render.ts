// One invoice as a page a person would send to accounts payable: self-contained HTML (no script, no external
// resource; its one stylesheet is inline and allowed by its hash), so it can be saved, printed or mailed as it is.
import { createHash } from 'node:crypto'
import { formatMinor } from './money'
import type { InvoiceRow } from './queries'

const STYLE = `body{font:14px/1.45 system-ui,sans-serif;color:#111;max-width:52rem;margin:2rem auto;padding:0 1rem}
h1{font-size:1.5rem;margin:0 0 .25rem}table{border-collapse:collapse;width:100%;margin:1.5rem 0}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #ddd}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
tfoot td{font-weight:600;border-bottom:none}.muted{color:#555}code{font-size:.8rem;word-break:break-all}`

const styleHash = createHash('sha256').update(STYLE).digest('base64')

/** The page's CSP: its own inline stylesheet and nothing else, never framed. */
export const INVOICE_PAGE_CSP = `default-src 'none'; style-src 'sha256-${styleHash}'; img-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** Major units with the currency's own minor digits. */
const major = (minor: string, currency: string) => `${formatMinor(BigInt(minor), currency)} ${currency}`
export function renderInvoiceHtml(inv: InvoiceRow, tenantName: string): string {
  const c = inv.currency
  const rows = inv.lines
    .map(
      (l) =>
        `<tr><td>${escapeHtml(l.description)}</td><td class="n">${escapeHtml(l.quantity)}</td><td class="n">${escapeHtml(l.included)}</td>` +
        `<td class="n">${escapeHtml(l.billable)}</td><td class="n">${escapeHtml(l.unitPrice)}${l.per === '1' ? '' : ` / ${escapeHtml(l.per)}`}</td><td class="n">${escapeHtml(major(l.amount, c))}</td></tr>`,
    )
    .join('\n')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Invoice ${escapeHtml(inv.period)}: ${escapeHtml(tenantName)}</title>
<style>${STYLE}</style></head>
<body>
<h1>Invoice ${escapeHtml(inv.period)}</h1>
<p class="muted">${escapeHtml(tenantName)} · invoice ${escapeHtml(inv.id)} · status ${escapeHtml(inv.status)}</p>
<p>Period ${escapeHtml(inv.period_start.toISOString())} to ${escapeHtml(inv.period_end.toISOString())} (UTC), plan ${escapeHtml(inv.plan_id)}, finalized ${escapeHtml(inv.created_at.toISOString())}.</p>
<table>
<thead><tr><th>Item</th><th class="n">Quantity</th><th class="n">Included</th><th class="n">Billable</th><th class="n">Unit price (minor units of ${escapeHtml(c)})</th><th class="n">Amount</th></tr></thead>
<tbody>
${rows}
</tbody>
<tfoot><tr><td colspan="5">Total</td><td class="n">${escapeHtml(major(inv.total, c))}</td></tr></tfoot>
</table>
<p class="muted">Snapshot hash (sha256): <code>${escapeHtml(inv.hash)}</code></p>
</body></html>
`
}
