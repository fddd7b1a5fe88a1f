// Order lines on the admin pages: an order's lines with the staging form, a shipment's items editor,
// the attention list, and how their forms are read.
import type { AllocatedLine, AttentionPage } from '../shipments/attention.js'
import type { Shipment } from '../model/shipment.js'
import { linesLeft, parseItemsInput, type ShipmentItemInput, type SplitRule } from '../model/items.js'
import type { OrderSummary } from '../order-store.js'
import { html, type SafeHtml } from '../html.js'
import { csrfField, dateTime, fieldErrors, formErrors, notice, scrollingTable, type FieldErrors } from './components.js'
import type { PageContext } from './components.js'

/** The form name of a line's quantity: the key the service's refusals use for that line. */
export const itemField = (lineItemId: number) => `items.${lineItemId}`

const RULE_LABELS: Record<string, string> = {
  remaining: 'Everything left, one shipment (remaining)',
  perLine: 'One shipment per line (perLine)',
}

/** What the staging form shows: the rule that pre-filled it and the quantities, typed or suggested. */
export interface StagingState {
  rule: string
  /** Every rule the selector offers: the built-in ones, then the host's. */
  ruleNames: readonly string[]
  /** Quantities by field name (`items.<lineItemId>`), as typed or as the rule suggests. */
  values: Record<string, string>
  /** How many shipments "create by rule" would make from what is left now. */
  shipmentsByRule: number
  errors: FieldErrors
}

/**
 * What a rule makes of what is left: its first shipment pre-fills the form (the form creates one), the
 * count tells what "create by rule" would create. Runs the rule as the service does (same lines left).
 */
export function suggestByRule(rule: SplitRule, lines: readonly AllocatedLine[], order: OrderSummary): { values: Record<string, string>; shipmentsByRule: number } {
  const orderLines = lines.map(({ allocated: _allocated, unallocated: _unallocated, ...line }) => line)
  const groups = rule(linesLeft(orderLines, new Map(lines.map((line) => [line.id, line.allocated]))), order).filter((group) => group.length > 0)
  // A host rule's odd output is refused here with the service's own message, before anything is shown.
  const first = new Map(groups.length > 0 ? parseItemsInput(groups[0]).map((item) => [item.lineItemId, item.quantity]) : [])
  const values: Record<string, string> = {}
  for (const line of lines) if (line.shippable) values[itemField(line.id)] = String(first.get(line.id) ?? 0)
  return { values, shipmentsByRule: groups.length }
}

/**
 * The quantities a form sent for the lines it showed: a blank or 0 leaves the line out. Anything but a
 * whole number is an error beside its line; what was typed is kept for the re-rendered form.
 */
export function readItemQuantities(
  body: Record<string, unknown>,
  lineItemIds: readonly number[],
): { values: Record<string, string>; items: ShipmentItemInput[]; errors: FieldErrors } {
  const values: Record<string, string> = {}
  const items: ShipmentItemInput[] = []
  const errors: FieldErrors = {}
  for (const lineItemId of lineItemIds) {
    const name = itemField(lineItemId)
    const raw = body[name]
    const typed = typeof raw === 'string' ? raw : Array.isArray(raw) && typeof raw[0] === 'string' ? raw[0] : ''
    values[name] = typed
    const trimmed = typed.trim()
    const quantity = /^\d{1,10}$/.test(trimmed) ? Number(trimmed) : trimmed === '' ? 0 : Number.NaN
    if (!(quantity >= 0 && quantity <= 2_147_483_647)) errors[name] = ['Enter a whole number, 0 or more.']
    else if (quantity > 0) items.push({ lineItemId, quantity })
  }
  return { values, items, errors }
}

/** "2 × T-shirt, 1 × Mug", or that the shipment is for the whole order. */
export function itemsSummary(shipment: Shipment): SafeHtml {
  if (shipment.items.length === 0) return html`<span class="meta">Whole order</span>`
  return html`${shipment.items.map((item, index) => html`${index > 0 ? ', ' : ''}${item.quantity} × ${item.name}`)}`
}

const lineCells = (line: Pick<AllocatedLine, 'name' | 'sku' | 'quantity' | 'allocated' | 'unallocated' | 'shippable'>) =>
  html`<td>${line.name}${line.shippable ? '' : html` <span class="badge badge-muted">Does not ship</span>`}</td><td>${line.sku ?? ''}</td>
<td class="num">${line.quantity}</td><td class="num">${line.allocated}</td><td class="num">${line.unallocated}</td>`

/** A line's quantity input with its errors beside it (aria-invalid, aria-describedby as the other forms). */
function quantityCell(name: string, value: string, label: string, errors: FieldErrors): SafeHtml {
  const failed = (errors[name] ?? []).length > 0
  const aria = failed ? html` aria-invalid="true" aria-describedby="${`error-${name}`}"` : html``
  return html`<td class="quantity${failed ? ' has-error' : ''}" data-field="${name}"><input type="number" min="0" step="1" inputmode="numeric" id="${`input-${name}`}" name="${name}" value="${value}" aria-label="${label}"${aria}>${fieldErrors(errors, name)}</td>`
}

const LINE_HEADINGS = html`<th>Line</th><th>SKU</th><th class="num">Ordered</th><th class="num">Allocated</th><th class="num">Unallocated</th>`

/** An order's lines with what its shipments hold, and the form that stages one more shipment. */
export function orderLinesSection(context: PageContext, order: { id: number; reference: string }, lines: readonly AllocatedLine[], staging: StagingState): SafeHtml {
  const left = lines.reduce((sum, line) => sum + line.unallocated, 0)
  const staged = context.can.edit && left > 0
  const table = (withInputs: boolean) => scrollingTable(`Lines of order ${order.reference}`, html`<table class="order-lines"><thead><tr>${LINE_HEADINGS}${withInputs ? html`<th>New shipment</th>` : ''}</tr></thead><tbody>${lines.map(
    (line) => html`<tr data-line="${line.id}">${lineCells(line)}${
      withInputs ? (line.shippable ? quantityCell(itemField(line.id), staging.values[itemField(line.id)] ?? '0', `Quantity of ${line.name} in the new shipment`, staging.errors) : html`<td></td>`) : ''
    }</tr>`,
  )}</tbody></table>`)
  const lineFields = new Set(lines.map((line) => itemField(line.id)))
  if (!staged) {
    return html`<h3>Lines</h3>
${formErrors(staging.errors, lineFields)}
${table(false)}
${left === 0 ? html`<p class="meta">Every shippable line is allocated in full.</p>` : ''}`
  }
  const ruleLabel = RULE_LABELS[staging.rule] ?? staging.rule
  return html`<h3>Lines</h3>
<form method="get" action="${context.prefix}/orders/${order.id}" class="toolbar" aria-label="Pre-fill by split rule">
<div><label for="input-rule">Split rule</label><select id="input-rule" name="rule">${staging.ruleNames.map(
    (name) => html`<option value="${name}"${name === staging.rule ? html` selected` : ''}>${RULE_LABELS[name] ?? name}</option>`,
  )}</select></div>
<button type="submit">Pre-fill</button>
</form>
<form method="post" action="${context.prefix}/orders/${order.id}/shipments" novalidate aria-label="Stage a shipment">
${csrfField(context.csrf)}
<input type="hidden" name="rule" value="${staging.rule}">
${formErrors(staging.errors, lineFields)}
${table(true)}
<p class="hint">Pre-filled by “${ruleLabel}”: ${
    staging.shipmentsByRule > 1 ? `it makes ${staging.shipmentsByRule} shipments of what is left; the form holds the first.` : 'the form holds what it would ship.'
  } A blank or 0 leaves a line out.</p>
<div class="toolbar"><button type="submit" name="action" value="items" class="primary">Create shipment</button>
<button type="submit" name="action" value="rule">Create by rule “${staging.rule}”</button></div>
</form>`
}

/** A line of the items editor: an order line, or an item the shipment holds that the order no longer lists. */
export type ItemEditorLine = Pick<AllocatedLine, 'id' | 'name' | 'sku' | 'quantity' | 'allocated' | 'unallocated' | 'shippable'>

/** The lines the items editor lists: the order's, plus any item the shipment holds beyond them. */
export function itemEditorLines(lines: readonly AllocatedLine[], shipment: Shipment): ItemEditorLine[] {
  const known = new Set(lines.map((line) => line.id))
  const gone = shipment.items
    .filter((item) => !known.has(item.lineItemId))
    .map((item) => ({ id: item.lineItemId, name: item.name, sku: item.sku, quantity: 0, allocated: 0, unallocated: 0, shippable: true }))
  return [...lines, ...gone]
}

/** The editor's values for a shipment as stored. */
export function shipmentItemValues(lines: readonly ItemEditorLine[], shipment: Shipment): Record<string, string> {
  const held = new Map(shipment.items.map((item) => [item.lineItemId, item.quantity]))
  return Object.fromEntries(lines.filter((line) => line.shippable || held.has(line.id)).map((line) => [itemField(line.id), String(held.get(line.id) ?? 0)]))
}

/** A shipment's items: quantities per line of its order (0 removes the line). */
export function shipmentItemsSection(context: PageContext, shipment: Shipment, lines: readonly ItemEditorLine[], values: Record<string, string>, errors: FieldErrors): SafeHtml {
  const held = new Map(shipment.items.map((item) => [item.lineItemId, item.quantity]))
  const editable = (line: ItemEditorLine) => line.shippable || held.has(line.id)
  const table = scrollingTable('Items of this shipment', html`<table class="order-lines"><thead><tr>${LINE_HEADINGS}<th>In this shipment</th></tr></thead><tbody>${lines.map(
    (line) => html`<tr data-line="${line.id}">${lineCells(line)}${
      context.can.edit && editable(line)
        ? quantityCell(itemField(line.id), values[itemField(line.id)] ?? '0', `Quantity of ${line.name} in this shipment`, errors)
        : html`<td class="num">${held.get(line.id) ?? 0}</td>`
    }</tr>`,
  )}</tbody></table>`)
  if (!context.can.edit) return html`<h2 id="items" tabindex="-1">Items</h2>${table}`
  return html`<h2 id="items" tabindex="-1">Items</h2>
<form method="post" action="${context.prefix}/shipments/${shipment.id}/items" novalidate aria-label="Shipment items">
${csrfField(context.csrf)}
${formErrors(errors, new Set(lines.map((line) => itemField(line.id))))}
${table}
<p class="hint">0 removes a line; every line at 0 makes this a shipment of the whole order. Allocated counts the order's active shipments (enabled, not cancelled, not deleted).</p>
<button type="submit" class="primary">Save items</button>
</form>`
}

// --- The attention list ---------------------------------------------------------------------------

/** Completed orders whose shipments do not hold every shippable line, with a link to fix each. */
export function attentionPage(context: PageContext, page: AttentionPage, available: boolean): SafeHtml {
  const pages = Math.max(1, Math.ceil(page.total / page.perPage))
  const link = (pageNumber: number) => `${context.prefix}/attention?page=${pageNumber}`
  return html`<h1>Orders needing attention</h1>
<p class="meta">Completed orders whose active shipments (enabled, not cancelled, not deleted) do not hold every shippable line in full.</p>
${available ? '' : notice('error', 'The order store gives no order lines, so no order is listed here.')}
${scrollingTable('Orders needing attention', html`<table class="attention"><thead><tr><th>Order</th><th>Ordered</th><th>Customer</th><th class="num">Lines missing</th><th class="num">Units missing</th><th></th></tr></thead>
<tbody>${page.orders.map(
    (order) => html`<tr data-order="${order.orderId}"><td><a href="${context.prefix}/orders/${order.orderId}">${order.reference}</a></td>
<td>${dateTime(order.dateOrdered, context.timeZone)}</td><td>${order.customer ?? ''}</td><td class="num">${order.linesMissing}</td><td class="num">${order.unitsMissing}</td>
<td><a href="${context.prefix}/orders/${order.orderId}" class="button">Allocate</a></td></tr>`,
  )}</tbody></table>`)}
${page.orders.length === 0 ? html`<p>No order needs attention.</p>` : ''}
<nav class="pager" aria-label="Pages">
${page.page > 1 ? html`<a href="${link(page.page - 1)}" rel="prev">Previous</a>` : ''}
<span>Page ${page.page} of ${pages} · ${page.total} orders</span>
${page.page < pages ? html`<a href="${link(page.page + 1)}" rel="next">Next</a>` : ''}
</nav>`
}
