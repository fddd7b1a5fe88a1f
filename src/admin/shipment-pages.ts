// The shipment screens: the list with its bulk status change, a shipment's page, an order's panel.
import type { Shipment, ShipmentHistoryEntry, ShipmentStatus } from '../model/shipment.js'
import type { Checkpoint } from '../model/checkpoints.js'
import { SHIPMENT_STATUSES } from '../model/shipment.js'
import type { ShipmentFieldDefinition } from '../shipments/field-layout.js'
import type { ShipmentPage } from '../shipments/service.js'
import type { AllocatedLine } from '../shipments/attention.js'
import type { ExternalReference } from '../gateway/integration.js'
import type { OrderSummary } from '../order-store.js'
import { attributeLabel } from '../shipments/update-input.js'
import { formatIsoWithOffset } from '../time.js'
import { html, isolated, safeHref, type SafeHtml } from '../html.js'
import type { PageContext, PageSection } from './components.js'
import {
  csrfField,
  dateTime,
  errorSummary,
  field,
  formErrors,
  notice,
  scrollingTable,
  select,
  STATUS_LABELS,
  statusBadge,
  summaryEntries,
  textArea,
  textInput,
  type FieldErrors,
} from './components.js'
import { itemsSummary, orderLinesSection, shipmentItemsSection, type ItemEditorLine, type StagingState } from './line-item-pages.js'
import { batchControls } from './batch-pages.js'

/** What every page knows about the request: where it is mounted, the form token, what the user may do. */
export type { PageContext } from './components.js'

const statusChoices = (withAny: string | null) => [
  ...(withAny === null ? [] : ([['', withAny]] as const)),
  ...SHIPMENT_STATUSES.map((status) => [status, STATUS_LABELS[status]] as const),
]

// --- The list -------------------------------------------------------------------------------------

export interface ShipmentListFilters {
  status: ShipmentStatus | ''
  order: string
  q: string
}

/** One line of the bulk status change's report. */
export interface BulkOutcome {
  id: number
  reference: string | null
  outcome: 'moved' | 'unchanged' | 'refused'
  message: string
}

export function shipmentListPage(
  context: PageContext,
  page: ShipmentPage,
  filters: ShipmentListFilters,
  extra: { orderNotFound?: boolean; bulk?: BulkOutcome[]; orderReferences?: ReadonlyMap<number, string> } = {},
): SafeHtml {
  const query = (pageNumber: number, afterId?: number) => {
    const params = new URLSearchParams()
    if (filters.status) params.set('status', filters.status)
    if (filters.order) params.set('order', filters.order)
    if (filters.q) params.set('q', filters.q)
    params.set('page', String(pageNumber))
    // The next page by key (after the last shipment shown): as cheap on page 20,000 as on page 2.
    if (afterId !== undefined) params.set('after', String(afterId))
    return `${context.prefix}/shipments?${params}`
  }
  const pages = Math.max(1, Math.ceil(page.total / page.perPage))
  return html`<h1>Shipments</h1>
${extra.bulk ? bulkReport(extra.bulk) : ''}
<form class="filters" method="get" action="${context.prefix}/shipments" role="search">
  <div><label for="filter-status">Status</label>${statusFilter(filters.status)}</div>
  <div><label for="filter-order">Order</label><input type="search" id="filter-order" name="order" value="${filters.order}" placeholder="Order reference or id"></div>
  <div><label for="filter-q">Reference</label><input type="search" id="filter-q" name="q" value="${filters.q}" placeholder="Reference starts with, or tracking number"></div>
  <button type="submit">Filter</button>
</form>
${extra.orderNotFound ? notice('error', html`No order matches “${filters.order}”.`) : ''}
<form method="post" action="${context.prefix}/shipments/bulk-status">
${csrfField(context.csrf)}
${scrollingTable('Shipments', html`<table class="shipments selectable">
<thead><tr><th><input type="checkbox" data-select-all aria-label="Select all"></th><th>Reference</th><th>Order</th><th>Status</th><th>Carrier</th><th>Tracking number</th><th>Updated</th></tr></thead>
<tbody>${page.shipments.map(
    (shipment) => html`<tr data-shipment="${shipment.id}">${
      html`<td><input type="checkbox" name="ids" value="${shipment.id}" aria-label="${`Select ${shipment.reference}`}"></td>`
    }<td><a href="${context.prefix}/shipments/${shipment.id}">${shipment.reference}</a>${shipment.dateDeleted ? html` <span class="badge badge-muted">Deleted</span>` : ''}</td>
<td>${orderLink(context, shipment.orderId, extra.orderReferences)}</td>
<td>${statusBadge(shipment.status)}</td><td>${shipment.carrier ?? ''}</td><td>${shipment.trackingNumber ?? ''}</td><td class="meta">${dateTime(shipment.dateUpdated, context.timeZone)}</td></tr>`,
  )}</tbody></table>`)}
${page.shipments.length === 0 ? html`<p>No shipments match.</p>` : ''}
${
  context.can.transition && page.shipments.length > 0
    ? html`<div class="toolbar"><div><label for="bulk-status">Change the selected to</label>${bulkStatusSelect()}</div>
<div><label for="bulk-message">Message</label><input type="text" id="bulk-message" name="statusMessage"></div>
<button type="submit" class="primary">Change status</button></div>`
    : ''
}
${
  page.shipments.length > 0
    ? html`<div class="toolbar" role="group" aria-label="Print the selected">
<button type="submit" formaction="${context.prefix}/shipments/documents/pick-list" formtarget="_blank">Print pick list</button>
<button type="submit" formaction="${context.prefix}/shipments/documents/packing-slips" formtarget="_blank">Print packing slips</button>
<button type="submit" formaction="${context.prefix}/shipments/documents/labels" formtarget="_blank">Print labels and slips</button></div>
${batchControls(context, filters)}`
    : ''
}
</form>
<nav class="pager" aria-label="Pages">
${page.page > 1 ? html`<a href="${query(page.page - 1)}" rel="prev">Previous</a>` : ''}
<span>Page ${page.page} of ${pages} · ${page.total} shipments</span>
${page.page < pages && page.shipments.length > 0 ? html`<a href="${query(page.page + 1, page.shipments.at(-1)!.id)}" rel="next">Next</a>` : ''}
</nav>`
}

/** A link to the order's page, named by its reference; `#id` when the order store no longer knows the order. */
export const orderLink = (context: PageContext, orderId: number, references: ReadonlyMap<number, string> | undefined) =>
  html`<a href="${context.prefix}/orders/${orderId}">${references?.get(orderId) ?? `#${orderId}`}</a>`

const statusFilter = (status: string) =>
  html`<select id="filter-status" name="status">${statusChoices('Any status').map(
    ([value, label]) => html`<option value="${value}"${value === status ? html` selected` : ''}>${label}</option>`,
  )}</select>`

const bulkStatusSelect = () =>
  html`<select id="bulk-status" name="status">${statusChoices('Choose a status').map(
    ([value, label]) => html`<option value="${value}">${label}</option>`,
  )}</select>`

function bulkReport(outcomes: BulkOutcome[]): SafeHtml {
  const refused = outcomes.filter((outcome) => outcome.outcome === 'refused').length
  return html`<section class="notice ${refused > 0 ? 'notice-error' : 'notice-ok'}" aria-label="Status change report" role="status">
<strong>Status change: ${outcomes.length - refused} done, ${refused} refused.</strong>
<ul class="bulk-report">${outcomes.map(
    (outcome) => html`<li data-outcome="${outcome.outcome}">${outcome.reference ?? `#${outcome.id}`}: ${outcome.message}</li>`,
  )}</ul></section>`
}

// --- A shipment -----------------------------------------------------------------------------------

const TEXT_FIELDS = ['trackingNumber', 'trackingUrl', 'carrier', 'service'] as const
const NOTE_FIELDS = ['fulfillmentNotes', 'shippingNotes'] as const
const DATE_FIELD = 'dateScheduledShip'

const fieldLabel = (definition: ShipmentFieldDefinition) => definition.name ?? attributeLabel(definition.handle)

/** The form's values for a shipment as stored: what the edit form shows, and what a submission is compared to. */
export function shipmentFormValues(shipment: Shipment, fields: readonly ShipmentFieldDefinition[], timeZone: string): Record<string, string> {
  const values: Record<string, string> = {}
  for (const key of [...TEXT_FIELDS, ...NOTE_FIELDS]) values[key] = shipment[key] ?? ''
  // ISO 8601 in the site timezone: the wall date and time are its first characters.
  values[`${DATE_FIELD}.date`] = shipment.dateScheduledShip?.slice(0, 10) ?? ''
  values[`${DATE_FIELD}.time`] = shipment.dateScheduledShip?.slice(11, 16) ?? ''
  for (const definition of fields) {
    // Own values only: a field named `constructor` without a value has none, not Object's.
    const value = Object.hasOwn(shipment.fields, definition.handle) ? shipment.fields[definition.handle] : undefined
    const name = `fields.${definition.handle}`
    if (value === undefined || value === null) values[name] = ''
    else if (definition.type === 'json') values[name] = JSON.stringify(value, null, 2)
    // Stored as an instant (UTC ISO 8601): the form shows its date in the site timezone.
    else if (definition.type === 'date') values[name] = typeof value === 'string' && Number.isFinite(Date.parse(value)) ? formatIsoWithOffset(Date.parse(value), timeZone).slice(0, 10) : ''
    else values[name] = String(value)
  }
  return values
}

/**
 * The update a submitted edit form asks for: only what differs from the form as it was shown, so an
 * untouched field is never rewritten. Values the form itself cannot read (JSON) are errors here.
 */
export function readShipmentForm(
  body: Record<string, unknown>,
  shown: Record<string, string>,
  fields: readonly ShipmentFieldDefinition[],
  timeZone: string,
): { submitted: Record<string, string>; update: Record<string, unknown>; errors: FieldErrors } {
  const submitted: Record<string, string> = {}
  for (const name of Object.keys(shown)) {
    const value = body[name]
    const text = typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : ''
    // Browsers send a textarea's line breaks as CRLF.
    submitted[name] = text.replace(/\r\n?/g, '\n')
  }
  const changed = (name: string) => submitted[name] !== shown[name]
  const update: Record<string, unknown> = {}
  const errors: FieldErrors = {}
  for (const key of [...TEXT_FIELDS, ...NOTE_FIELDS]) if (changed(key)) update[key] = submitted[key]
  if (changed(`${DATE_FIELD}.date`) || changed(`${DATE_FIELD}.time`)) {
    const date = submitted[`${DATE_FIELD}.date`].trim()
    update[DATE_FIELD] = date === '' ? '' : { date, time: submitted[`${DATE_FIELD}.time`].trim() || '00:00', timezone: timeZone }
  }
  const fieldValues: Record<string, unknown> = {}
  for (const definition of fields) {
    const name = `fields.${definition.handle}`
    if (!changed(name)) continue
    const text = submitted[name]
    if (text.trim() === '') {
      fieldValues[definition.handle] = ''
      continue
    }
    switch (definition.type) {
      case 'number':
        // Not a number: sent as it is, so the service's message names the field.
        fieldValues[definition.handle] = /^\s*-?\d+(\.\d+)?\s*$/.test(text) ? Number(text) : text
        break
      case 'boolean':
        fieldValues[definition.handle] = text === 'true' ? true : text === 'false' ? false : text
        break
      case 'date':
        fieldValues[definition.handle] = { date: text.trim(), timezone: timeZone }
        break
      case 'json':
        try {
          fieldValues[definition.handle] = JSON.parse(text)
        } catch {
          errors[name] = [`${fieldLabel(definition)} is not valid JSON.`]
        }
        break
      default:
        fieldValues[definition.handle] = text
    }
  }
  if (Object.keys(fieldValues).length > 0) update.fields = fieldValues
  return { submitted, update, errors }
}

/** The service's error keys, as the form names its fields. */
export function formFieldErrors(errors: Record<string, string[]>): FieldErrors {
  const named: FieldErrors = {}
  for (const [key, messages] of Object.entries(errors)) {
    const name = key === DATE_FIELD ? `${DATE_FIELD}.date` : key === 'targetStatusCode' ? 'status' : key
    named[name] = [...(named[name] ?? []), ...messages]
  }
  return named
}

export interface ShipmentPageData {
  shipment: Shipment
  history: ShipmentHistoryEntry[]
  /** The carrier's checkpoints, oldest first (shown newest first). */
  checkpoints?: Checkpoint[] | undefined
  references: ExternalReference[]
  fields: readonly ShipmentFieldDefinition[]
  /** The edit form's values: the stored ones, or what was submitted when it failed. */
  values: Record<string, string>
  errors: FieldErrors
  transitionErrors: FieldErrors
  /** The items editor: the order's lines; null when the order store gives none and the shipment holds none. */
  items: { lines: ItemEditorLine[]; values: Record<string, string>; errors: FieldErrors } | null
  flash: string | null
  /** The order's reference; null when the order store no longer knows the order. */
  orderReference: string | null
  /** Display names of the history's users, by id (the host's `admin.userName`); a user without one shows the id. */
  userNames: ReadonlyMap<string, string>
  /** The public tracking link's block (with the `trackingPage` option). */
  trackingLink?: SafeHtml | null
  /** The parcels section (parcel-pages.ts), its problems listed in the page's error summary. */
  parcels?: PageSection | null
  /** "Which rule and why" (rules-pages.ts): the shipping rules' dry run for the shipment's parcels. */
  rulesPanel?: SafeHtml | null
  /** The ship-to address panel (address-pages.ts): the carrier's verdict and corrections, Verify, Accept, Ship as is. */
  addressPanel?: SafeHtml | null
  /** Customs (customs-pages.ts): each international parcel's declaration, its form's problems in the summary. */
  customs?: PageSection | null
}

export function shipmentPage(context: PageContext, data: ShipmentPageData): SafeHtml {
  const { shipment, values, errors } = data
  const url = `${context.prefix}/shipments/${shipment.id}`
  const names = new Set(Object.keys(values))
  const readOnly = context.can.edit ? html`` : html` disabled`
  const textField = (name: (typeof TEXT_FIELDS)[number] | (typeof NOTE_FIELDS)[number], multiline = false) =>
    field({ name, label: attributeLabel(name), errors }, (aria) =>
      multiline ? textArea(name, values[name], html`${aria}${readOnly}`) : textInput(name, values[name], html`${aria}${readOnly}`),
    )
  const trackingHref = safeHref(shipment.trackingUrl)
  const itemFields = new Set(Object.keys(data.items?.values ?? {}))
  const problems = [
    ...summaryEntries(errors, new Set([...names, `${DATE_FIELD}.date`])),
    ...summaryEntries(data.items?.errors ?? {}, itemFields),
    ...summaryEntries(data.transitionErrors, new Set(['status', 'statusMessage'])),
    ...(data.parcels?.problems ?? []),
    ...(data.customs?.problems ?? []),
  ]
  // The status change sits below every field: a link near the top reaches it in a few tab stops.
  const pageLinks = [
    context.can.transition ? html`<a href="#change-status">Change status</a>` : '',
    data.items ? html`<a href="#items">Items</a>` : '',
    data.addressPanel ? html`<a href="#ship-to">Ship-to address</a>` : '',
    data.parcels ? html`<a href="#parcels">Parcels</a>` : '',
    data.customs ? html`<a href="#customs">Customs</a>` : '',
    data.rulesPanel ? html`<a href="#shipping-rules">Which rule and why</a>` : '',
    data.checkpoints?.length ? html`<a href="#checkpoints">Carrier checkpoints</a>` : '',
    html`<a href="#history">History</a>`,
  ]
  return html`${errorSummary(problems)}<h1>Shipment ${shipment.reference} ${statusBadge(shipment.status)}</h1>
<nav class="page-links" aria-label="On this page">${pageLinks.map((link) => (link ? html`${link} ` : ''))}</nav>
${shipment.dateDeleted ? '' : html`<p><a class="button" href="${url}/packing-slip" target="_blank" rel="noopener">Print packing slip</a></p>`}
${data.flash ? notice('ok', data.flash) : ''}
${shipment.dateDeleted ? notice('error', html`This shipment was deleted on ${dateTime(shipment.dateDeleted, context.timeZone)}. It stays readable; restore it to list it again.`) : ''}
<div class="columns"><div>
<form method="post" action="${url}" novalidate aria-label="Shipment fields">
${csrfField(context.csrf)}
${formErrors(errors, new Set([...names, `${DATE_FIELD}.date`]))}
${textField('trackingNumber')}
${field({ name: 'trackingUrl', label: 'Tracking Url', errors, hint: trackingHref ? html`<a href="${trackingHref}" rel="noopener noreferrer" target="_blank">Open the tracking page</a>` : '' }, (aria) => textInput('trackingUrl', values.trackingUrl, html`${aria}${readOnly}`))}
${textField('carrier')}
${textField('service')}
${field({ name: `${DATE_FIELD}.date`, label: `Date Scheduled Ship (${context.timeZone})`, errors, hint: `Date and time in the site timezone, ${context.timeZone}.` }, (aria) =>
    html`<div class="field-row">${textInput(`${DATE_FIELD}.date`, values[`${DATE_FIELD}.date`], html`${aria}${readOnly}`, 'date')}
<input type="time" name="${`${DATE_FIELD}.time`}" value="${values[`${DATE_FIELD}.time`]}" aria-label="Time"${readOnly}></div>`,
  )}
${textField('fulfillmentNotes', true)}
${textField('shippingNotes', true)}
${data.fields.length > 0 ? html`<h2>Custom fields</h2>${data.fields.map((definition) => customField(definition, values, errors, readOnly))}` : ''}
${context.can.edit ? html`<button type="submit" class="primary">Save</button>` : html`<p class="meta">You may view this shipment, not edit it.</p>`}
</form>
${data.items ? shipmentItemsSection(context, shipment, data.items.lines, data.items.values, data.items.errors) : ''}
${data.addressPanel ?? ''}
${data.parcels?.content ?? ''}
${data.customs?.content ?? ''}
${data.rulesPanel ?? ''}
${context.can.transition ? transitionForm(context, shipment, data.transitionErrors) : ''}
</div><aside>
<h2>Details</h2>
<table><tbody>
<tr><th>Order</th><td>${orderLink(context, shipment.orderId, data.orderReference === null ? undefined : new Map([[shipment.orderId, data.orderReference]]))}</td></tr>
<tr><th>Status</th><td>${statusBadge(shipment.status)}</td></tr>
<tr><th>Shipped</th><td>${dateTime(shipment.dateShipped, context.timeZone)}</td></tr>
${shipment.estimatedDelivery ? html`<tr><th>Estimated delivery</th><td data-estimate>${dateTime(shipment.estimatedDelivery, context.timeZone)}${shipment.estimatedDeliverySource ? html` <span class="meta">(${shipment.estimatedDeliverySource})</span>` : ''}</td></tr>` : ''}
<tr><th>Created</th><td>${dateTime(shipment.dateCreated, context.timeZone)}</td></tr>
<tr><th>Updated</th><td>${dateTime(shipment.dateUpdated, context.timeZone)}</td></tr>
<tr><th>Timezone</th><td>${context.timeZone}</td></tr>
</tbody></table>
${data.trackingLink ?? ''}
<h2>External references</h2>
${data.references.length === 0 ? html`<p class="meta">None.</p>` : html`<ul class="references">${data.references.map((reference) => {
    const href = safeHref(reference.externalUrl)
    return html`<li><strong>${reference.integrationHandle}</strong>: ${href ? html`<a href="${href}" rel="noopener noreferrer" target="_blank">${reference.externalId ?? href}</a>` : (reference.externalId ?? '—')}${
      reference.lastPushAt
        ? html`<div class="meta" data-push="${reference.lastPushError ? 'failed' : 'ok'}">Last push ${dateTime(reference.lastPushAt, context.timeZone)} (${reference.pushAttempts} ${reference.pushAttempts === 1 ? 'attempt' : 'attempts'}): ${reference.lastPushError ?? 'sent'}</div>`
        : ''
    }</li>`
  })}</ul>`}
${data.checkpoints?.length ? checkpointsSection(data.checkpoints, context.timeZone) : ''}
<h2 id="history" tabindex="-1">History</h2>
<ol class="timeline" aria-label="History">${data.history.map(
    (entry) => html`<li data-history="${entry.id}"><div>${entry.fromStatus ? html`${statusBadge(entry.fromStatus)} → ` : html`Created `}${statusBadge(entry.toStatus)}</div>
${entry.message ? html`<div class="history-message">${entry.message}</div>` : ''}
<div class="meta">${dateTime(entry.dateCreated, context.timeZone)}${entry.userId ? html` · by ${data.userNames.get(entry.userId) ?? `user ${entry.userId}`}` : ''}${entry.sourceIntegration ? html` · via ${entry.sourceIntegration}` : ''}${entry.externalCode ? html` · code ${entry.externalCode}` : ''}</div></li>`,
  )}</ol>
${context.can.edit ? deleteForm(context, shipment) : ''}
</aside></div>`
}

/** The carrier's scans, newest first, each dated as every admin date is (the site timezone). */
function checkpointsSection(checkpoints: readonly Checkpoint[], timeZone: string): SafeHtml {
  return html`<h2 id="checkpoints" tabindex="-1">Carrier checkpoints</h2>
<ol class="timeline" aria-label="Carrier checkpoints">${[...checkpoints].reverse().map(
    (checkpoint) => html`<li data-checkpoint="${checkpoint.id}"><div>${isolated(checkpoint.message ?? checkpoint.status) || '—'}</div>
<div class="meta">${dateTime(checkpoint.occurredAtUtc, timeZone)}${checkpoint.location ? html` · ${isolated(checkpoint.location)}` : ''}${checkpoint.status ? html` · ${isolated(checkpoint.status)}` : ''}${checkpoint.subStatus ? html` (${isolated(checkpoint.subStatus)})` : ''}${checkpoint.signedBy ? html` · signed by ${isolated(checkpoint.signedBy)}` : ''} · via ${checkpoint.source}${checkpoint.parcelId !== null ? html` · parcel ${checkpoint.trackingNumber}` : ''}</div></li>`,
  )}</ol>`
}

function customField(definition: ShipmentFieldDefinition, values: Record<string, string>, errors: FieldErrors, readOnly: SafeHtml): SafeHtml {
  const name = `fields.${definition.handle}`
  const label = fieldLabel(definition)
  return field({ name, label, errors, hint: definition.type === 'json' ? 'JSON' : definition.type === 'date' ? 'A date in the site timezone.' : '' }, (aria) => {
    const attributes = html`${aria}${readOnly}`
    switch (definition.type) {
      case 'boolean':
        return select(name, values[name], [['', '—'], ['true', 'Yes'], ['false', 'No']], attributes)
      case 'json':
        return textArea(name, values[name], attributes)
      case 'date':
        return textInput(name, values[name], attributes, 'date')
      case 'number':
        return html`<input type="text" inputmode="decimal" id="${`input-${name}`}" name="${name}" value="${values[name]}"${attributes}>`
      default:
        return textInput(name, values[name], attributes)
    }
  })
}

function transitionForm(context: PageContext, shipment: Shipment, errors: FieldErrors): SafeHtml {
  const choices = statusChoices('Choose a status').filter(([status]) => status !== shipment.status)
  return html`<h2 id="change-status" tabindex="-1">Change status</h2>
<form method="post" action="${context.prefix}/shipments/${shipment.id}/transition" aria-label="Change status">
${csrfField(context.csrf)}
${formErrors(errors, new Set(['status', 'statusMessage']))}
${field({ name: 'status', label: 'New status', errors }, (aria) => select('status', '', choices, aria))}
${field({ name: 'statusMessage', label: 'Message', errors, hint: 'Recorded in the history.' }, (aria) => textInput('statusMessage', '', aria))}
<button type="submit" class="primary">Change status</button>
</form>`
}

function deleteForm(context: PageContext, shipment: Shipment): SafeHtml {
  const url = `${context.prefix}/shipments/${shipment.id}`
  return shipment.dateDeleted
    ? html`<form method="post" action="${url}/restore">${csrfField(context.csrf)}<button type="submit">Restore</button></form>`
    : html`<form method="post" action="${url}/delete" data-confirm="Delete this shipment? It can be restored later.">${csrfField(context.csrf)}<button type="submit" class="danger">Delete</button></form>`
}

// --- An order's shipments -------------------------------------------------------------------------

/** The order page's head: who ordered and where the order stands (the host's own order screen has these already). */
export function orderDetails(order: OrderSummary): SafeHtml {
  const status = order.statusName ?? order.statusHandle
  return html`<table class="order-details"><tbody>
<tr><th>Customer</th><td data-customer>${order.customerName || order.email ? html`${order.customerName ?? ''}${order.customerName && order.email ? html`<br>` : ''}${order.email ? html`<span class="meta">${order.email}</span>` : ''}` : '—'}</td></tr>
<tr><th>Order status</th><td data-order-status="${order.statusHandle ?? ''}">${status ?? '—'}${order.isCompleted ? '' : html` <span class="badge badge-muted">Not completed</span>`}</td></tr>
</tbody></table>`
}

/**
 * The order's shipments and how to create more: with the order's lines, the lines and the staging form;
 * without (the order store gives none), "create N shipments". A fragment a host may embed on its own
 * order screen.
 */
export function orderPanel(
  context: PageContext,
  order: { id: number; reference: string },
  shipments: Shipment[],
  state: { errors: FieldErrors; count: string; flash: string | null; lines: { lines: AllocatedLine[]; staging: StagingState } | null },
): SafeHtml {
  const withItems = state.lines !== null
  const problems = state.lines
    ? summaryEntries(state.lines.staging.errors, new Set(state.lines.lines.filter((line) => line.shippable).map((line) => `items.${line.id}`)), { rule: 'input-rule' })
    : summaryEntries(state.errors, new Set(['count']))
  return html`<section class="shipments-admin shipments-order-panel" data-order="${order.id}" aria-label="${`Shipments of order ${order.reference}`}">
${errorSummary(problems)}
<h2>Shipments of order ${order.reference}</h2>
${state.flash ? notice('ok', state.flash) : ''}
${shipments.length === 0 ? html`<p>No shipments yet.</p>` : scrollingTable(`Shipments of order ${order.reference}`, html`<table><thead><tr><th>Reference</th><th>Status</th>${withItems ? html`<th>Items</th>` : ''}<th>Carrier</th><th>Tracking number</th></tr></thead><tbody>${shipments.map(
    (shipment) => html`<tr data-shipment="${shipment.id}"><td><a href="${context.prefix}/shipments/${shipment.id}">${shipment.reference}</a>${shipment.enabled ? '' : html` <span class="badge badge-muted">Disabled</span>`}</td><td>${statusBadge(shipment.status)}</td>${
      withItems ? html`<td>${itemsSummary(shipment)}</td>` : ''
    }<td>${shipment.carrier ?? ''}</td><td>${shipment.trackingNumber ?? ''}</td></tr>`,
  )}</tbody></table>`)}
${
  state.lines
    ? orderLinesSection(context, order, state.lines.lines, state.lines.staging)
    : context.can.edit
      ? html`<form method="post" action="${context.prefix}/orders/${order.id}/shipments" class="toolbar" aria-label="Create shipments">
${csrfField(context.csrf)}
${field({ name: 'count', label: 'Create shipments', errors: state.errors }, (aria) => html`<input type="number" min="1" max="100" id="input-count" name="count" value="${state.count}"${aria}>`)}
<button type="submit">Create</button></form>`
      : ''
}
</section>`
}
