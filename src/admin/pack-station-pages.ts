// The pack station's page, made for a packing table: one scan field a barcode scanner types into (it
// presses Enter), the shipment's lines counted off as their items are scanned, the weight to type or
// confirm and "Buy and print". Works without script: a scan is a GET form (it changes nothing; the
// counts ride along in the form, as the station's API takes them), the purchase a POST form with its
// CSRF token. The page's script (assets/admin/pack-station.js) only keeps the focus in the scan field
// and opens the bought label.
import { html, safeHref, type SafeHtml } from '../html.js'
import { WEIGHT_UNITS } from '../model/units.js'
import type { PackLabel, PackLine, PackShipment } from '../pack-station/service.js'
import { csrfField, notice, scrollingTable, select, type PageContext } from './components.js'

/** What the page shows: a shipment in pack mode (or none), the last scan's outcome, the labels bought. */
export interface PackStationPageData {
  shipment: PackShipment | null
  /** The line the last scan counted. */
  counted: PackLine | null
  /** A refusal to read at a glance (a wrong item, one too many, an unknown slip...). */
  refusal: string | null
  /** Labels just bought (or found bought), to print: the next scan is a slip. */
  printed: PackLabel[] | null
  /** How many labels the finish bought now (0: they were bought before). */
  bought: number
  /** The weight typed, kept when the purchase was refused. */
  weight: { value: string; unit: string } | null
}

/** The counts as the forms carry them: `lineItemId:counted` pairs, comma-separated. */
export const countsText = (lines: readonly PackLine[]) => lines.map((line) => `${line.lineItemId}:${line.counted}`).join(',')

const lineState = (line: PackLine) => (line.counted >= line.needed ? 'Packed' : `${line.needed - line.counted} to go`)

function linesTable(lines: readonly PackLine[], last: PackLine | null): SafeHtml {
  const rows = lines.map((line) => {
    const done = line.counted >= line.needed
    const classes = [done ? 'pack-line-done' : 'pack-line-open', last?.lineItemId === line.lineItemId ? 'pack-line-last' : ''].filter(Boolean).join(' ')
    return html`<tr class="${classes}" data-line="${line.lineItemId}" data-counted="${line.counted}" data-needed="${line.needed}">
<td>${line.name}</td><td><code>${line.code ?? '—'}</code></td><td class="pack-count">${line.counted} of ${line.needed}</td><td><span class="${`badge ${done ? 'badge-shipped' : 'badge-new'}`}">${lineState(line)}</span></td></tr>`
  })
  return scrollingTable('Lines to pack', html`<table class="pack-lines"><thead><tr><th>Item</th><th>Scan code</th><th>Counted</th><th>State</th></tr></thead><tbody>${rows}</tbody></table>`)
}

function labelLinks(labels: readonly PackLabel[]): SafeHtml {
  return html`<ul class="pack-labels">${labels.map((label) => {
    const href = safeHref(label.url)
    const what = [label.carrier, label.service, label.trackingNumber].filter(Boolean).join(' ')
    return html`<li>${href ? html`<a class="button" href="${href}" target="_blank" rel="noopener" data-pack-label="${href}">Print the label (${label.format})</a>` : 'The label has no printable address'} <span>${what}</span></li>`
  })}</ul>`
}

/** The scan field: the page's one always-focused input, in a GET form (a scan changes nothing). */
function scanForm(context: PageContext, shipment: PackShipment | null, focused: boolean): SafeHtml {
  const label = shipment ? 'Scan an item' : 'Scan a packing slip'
  const hint = shipment ? `Each item's barcode (or its SKU), one at a time, for shipment ${shipment.reference}.` : "The barcode under the slip's title: the shipment's reference."
  return html`<form method="get" action="${`${context.prefix}/pack-station`}" class="pack-scan" aria-label="Scan">
${shipment ? html`<input type="hidden" name="shipment" value="${shipment.id}"><input type="hidden" name="counted" value="${countsText(shipment.lines)}">` : ''}
<div class="field"><label for="pack-scan">${label}</label>
<input type="text" id="pack-scan" name="code" value="" autocomplete="off" autocapitalize="off" spellcheck="false" enterkeyhint="go" aria-describedby="pack-scan-hint" data-pack-scan${focused ? html` autofocus` : ''}>
<p class="hint" id="pack-scan-hint">${hint}</p></div>
<div class="pack-actions"><button type="submit">Scan</button>${shipment ? html` <a class="button" href="${`${context.prefix}/pack-station`}">Start over</a>` : ''}</div>
</form>`
}

function finishForm(context: PageContext, shipment: PackShipment, weight: { value: string; unit: string } | null): SafeHtml {
  const value = weight?.value ?? shipment.weight?.value ?? ''
  const unit = weight?.unit ?? shipment.weight?.unit ?? 'kg'
  return html`<form method="post" action="${`${context.prefix}/pack-station/finish`}" class="pack-finish" aria-label="Weigh and buy the label">${csrfField(context.csrf)}
<input type="hidden" name="shipment" value="${shipment.id}"><input type="hidden" name="counted" value="${countsText(shipment.lines)}">
<div class="field"><label for="pack-weight">Weight of the parcel</label>
<input type="text" id="pack-weight" name="weight" value="${value}" inputmode="decimal" autocomplete="off" required aria-describedby="pack-weight-hint" autofocus>
<p class="hint" id="pack-weight-hint">${value ? 'Confirm it with Enter, or type what the scale shows.' : 'Type what the scale shows, then press Enter.'}</p></div>
<div class="field"><label for="pack-weight-unit">Unit</label>${select('weightUnit', unit, WEIGHT_UNITS.map((each) => [each, each] as const), html``, 'pack-weight-unit')}</div>
<button type="submit" class="primary">Buy and print</button>
</form>`
}

export function packStationPage(context: PageContext, data: PackStationPageData): SafeHtml {
  const { shipment, refusal, printed } = data
  const packing = shipment !== null && printed === null
  const complete = packing && shipment.complete
  const status = printed
    ? html`${data.bought > 0 ? 'Label bought' : 'The label was bought before: nothing bought again'} for shipment ${shipment?.reference ?? ''}. Scan the next packing slip.`
    : data.counted
      ? html`Counted: ${data.counted.name}, ${data.counted.counted} of ${data.counted.needed}.${complete ? ' Everything is packed: weigh the parcel.' : ''}`
      : packing
        ? html`Shipment ${shipment.reference} is open: scan its items.`
        : html`Ready: scan a packing slip.`
  return html`<h1>Pack station</h1>
<div class="pack-station${refusal ? ' pack-refused' : ''}${complete ? ' pack-complete' : ''}" data-pack-state="${printed ? 'printed' : complete ? 'complete' : packing ? 'packing' : 'idle'}">
${refusal ? html`<div class="notice notice-error pack-alert" role="alert"><strong>Refused.</strong> ${refusal}</div>` : ''}
<p class="pack-status" role="status">${status}</p>
${printed ? labelLinks(printed) : ''}
<script src="${`${context.prefix}/assets/pack-station.js`}" defer></script>
${packing ? html`<h2>Shipment ${shipment.reference}</h2>${shipment.labels.length > 0 ? notice('ok', html`This shipment has its label already; "Buy and print" buys nothing again. ${labelLinks(shipment.labels)}`) : ''}${linesTable(shipment.lines, data.counted)}` : ''}
${complete ? finishForm(context, shipment, data.weight) : ''}
${scanForm(context, packing ? shipment : null, !complete)}
</div>`
}
