// The label batch screens: the list of batches, and a batch's progress (done, bought, failed with the
// carrier's words, skipped with the reason), refreshed in place while it runs, with "Retry the failed
// ones" and "Cancel"; and the shipment list's "buy labels" controls.
import type { LabelBatch, LabelBatchItem } from '../batches/service.js'
import { html, isolated, type SafeHtml } from '../html.js'
import { csrfField, dateTime, notice, scrollingTable, type PageContext } from './components.js'

const STATE_LABELS: Record<LabelBatch['state'], string> = { queued: 'Queued', running: 'Running', finished: 'Finished', cancelled: 'Cancelled' }
const ITEM_LABELS: Record<LabelBatchItem['state'], string> = { queued: 'Waiting', bought: 'Bought', failed: 'Failed', skipped: 'Skipped', cancelled: 'Cancelled' }

const stateBadge = (state: LabelBatch['state']) => html`<span class="badge badge-muted" data-batch-state="${state}">${STATE_LABELS[state]}</span>`

/** The shipment list's controls: buy labels for the selected shipments, or for all the filter matches. */
export function batchControls(context: PageContext, filters: { status: string; order: string; q: string }): SafeHtml {
  if (!context.can.buyLabels) return html``
  return html`<fieldset class="toolbar batch-controls"><legend>Buy labels by the shipping rules</legend>
<div><input type="checkbox" id="batch-suggest" name="suggestParcels" value="1"> <label for="batch-suggest">Suggest parcels from the boxes for shipments without any</label></div>
<div><label for="batch-format">Label format</label> <select id="batch-format" name="labelFormat"><option value="PDF" selected>PDF</option><option value="ZPL">ZPL (thermal printers)</option><option value="PNG">PNG</option></select></div>
<input type="hidden" name="filterStatus" value="${filters.status}"><input type="hidden" name="filterOrder" value="${filters.order}"><input type="hidden" name="filterQ" value="${filters.q}">
<button type="submit" formaction="${context.prefix}/label-batches" name="scope" value="selected">Buy labels for the selected</button>
<button type="submit" formaction="${context.prefix}/label-batches" name="scope" value="filter">Buy labels for all that match this filter</button>
</fieldset>`
}

export function batchListPage(context: PageContext, data: { batches: LabelBatch[]; nextBeforeId: number | null; flash: string | null }): SafeHtml {
  const base = `${context.prefix}/label-batches`
  const rows = data.batches.map(
    (batch) => html`<tr data-batch="${batch.id}"><td><a href="${`${base}/${batch.id}`}">Batch ${batch.id}</a></td><td>${stateBadge(batch.state)}</td>
<td>${batch.done} of ${batch.total}</td><td>${batch.counts.bought}</td><td>${batch.counts.failed}</td><td>${batch.counts.skipped}</td><td>${dateTime(batch.dateCreated, context.timeZone)}</td></tr>`,
  )
  return html`<h1>Label batches</h1>${data.flash ? notice('ok', data.flash) : ''}
<p>Buy labels for many shipments at once from the <a href="${`${context.prefix}/shipments`}">shipment list</a>: select them, or take all that match a filter.</p>
${
  data.batches.length === 0
    ? html`<p class="meta">No label batches yet.</p>`
    : scrollingTable('Label batches', html`<table><thead><tr><th>Batch</th><th>State</th><th>Done</th><th>Bought</th><th>Failed</th><th>Skipped</th><th>Created</th></tr></thead><tbody>${rows}</tbody></table>`)
}
${data.nextBeforeId !== null ? html`<p><a href="${`${base}?beforeId=${data.nextBeforeId}`}" rel="next">Older batches</a></p>` : ''}`
}

export interface BatchPageData {
  batch: LabelBatch
  /** The failed and skipped items (their reasons), and the first items in pick order. */
  problems: LabelBatchItem[]
  items: LabelBatchItem[]
  moreItems: boolean
  flash: string | null
}

function itemRow(context: PageContext, item: LabelBatchItem): SafeHtml {
  const shipment = `${context.prefix}/shipments/${item.shipmentId}`
  return html`<tr data-item="${item.id}"><td>${item.position + 1}</td><td><a href="${shipment}">Shipment ${item.shipmentId}</a></td><td>${item.parcelId === null ? '—' : `Parcel ${item.parcelId}`}</td>
<td>${ITEM_LABELS[item.state]}</td><td>${item.carrier ? `${item.carrier} ${item.service ?? ''}` : ''}</td><td>${isolated(item.reason ?? '')}</td></tr>`
}

const itemTable = (context: PageContext, label: string, items: LabelBatchItem[]) =>
  scrollingTable(label, html`<table><thead><tr><th>#</th><th>Shipment</th><th>Parcel</th><th>State</th><th>Service</th><th>Reason</th></tr></thead><tbody>${items.map((item) => itemRow(context, item))}</tbody></table>`)

export function batchPage(context: PageContext, data: BatchPageData): SafeHtml {
  const { batch } = data
  const base = `${context.prefix}/label-batches/${batch.id}`
  const running = batch.state === 'queued' || batch.state === 'running'
  const { counts } = batch
  const actions: SafeHtml[] = []
  if (counts.failed > 0 && batch.state !== 'cancelled') {
    actions.push(html`<form method="post" action="${`${base}/retry`}">${csrfField(context.csrf)}<button type="submit" class="primary">Retry the failed ones</button></form>`)
  }
  if (counts.bought > 0) {
    actions.push(html`<form method="get" action="${`${base}/print`}" target="_blank" aria-label="Print the labels" class="batch-print">
<label for="print-format">Print as</label> <select id="print-format" name="format"><option value="pdf">PDF (labels at their own size)</option><option value="zpl">ZPL (thermal printer)</option></select>
<label><input type="checkbox" name="slips" value="yes"> Packing slips</label> <label><input type="checkbox" name="pickList" value="yes"> Pick list first</label>
<button type="submit">Print the ${counts.bought} label${counts.bought === 1 ? '' : 's'}</button></form>`)
  }
  if (running) actions.push(html`<form method="post" action="${`${base}/cancel`}">${csrfField(context.csrf)}<button type="submit" class="danger">Cancel what has not started</button></form>`)
  return html`<h1>Label batch ${batch.id}</h1>${data.flash ? notice('ok', data.flash) : ''}
<p><a href="${`${context.prefix}/label-batches`}">All label batches</a></p>
<section aria-labelledby="batch-progress-heading">
<h2 id="batch-progress-heading">Progress</h2>
<div data-batch-progress${running ? html` data-running` : ''} role="status" aria-live="polite">
<p>${stateBadge(batch.state)} ${batch.done} of ${batch.total} done${running ? html` <span class="meta">(this page updates itself)</span>` : ''}</p>
<progress max="${Math.max(1, batch.total)}" value="${batch.done}" aria-label="Done">${batch.done} of ${batch.total}</progress>
<dl class="details"><dt>Bought</dt><dd>${counts.bought}</dd><dt>Failed</dt><dd>${counts.failed}</dd><dt>Skipped</dt><dd>${counts.skipped}</dd><dt>Waiting</dt><dd>${counts.queued}</dd>${counts.cancelled > 0 ? html`<dt>Cancelled</dt><dd>${counts.cancelled}</dd>` : ''}</dl>
${data.problems.length > 0 ? html`<h3>Failed and skipped</h3>${itemTable(context, 'Failed and skipped parcels', data.problems)}` : ''}
</div>
</section>
${actions.length > 0 ? html`<div class="toolbar">${actions}</div>` : ''}
<section aria-labelledby="batch-items-heading"><h2 id="batch-items-heading">Parcels in pick order</h2>
${itemTable(context, 'Parcels in pick order', data.items)}
${data.moreItems ? html`<p class="meta">The first ${data.items.length} are shown; the API pages through the rest.</p>` : ''}</section>
<dl class="details"><dt>Label format</dt><dd>${batch.settings.labelFormat}</dd><dt>Suggest parcels</dt><dd>${batch.settings.suggestParcels ? 'Yes' : 'No'}</dd>
<dt>Created</dt><dd>${dateTime(batch.dateCreated, context.timeZone)}</dd><dt>Finished</dt><dd>${dateTime(batch.dateFinished, context.timeZone)}</dd></dl>`
}
