// The returns screens: the list (by state and age), a return's page (authorise, reject, label or a
// tracking number, receive line by line, close) and the order page's returns section.
import type { Return, ReturnHistoryEntry, ReturnState } from '../model/return.js'
import { RETURN_STATE_LABELS, RETURN_STATES } from '../model/return.js'

export { RETURN_STATE_LABELS }
import type { ReturnableLine } from '../returns/service.js'
import { WEIGHT_UNITS } from '../model/units.js'
import { csrfField, dateTime, errorSummary, returnStateBadge, field, formErrors, notice, scrollingTable, select, summaryEntries, textInput, type FieldErrors, type PageContext } from './components.js'
import { html, isolated, safeHref, type SafeHtml } from '../html.js'

const stateBadge = (state: ReturnState) => returnStateBadge(state)
const linesText = (entry: Return) => entry.lines.map((line) => `${line.quantity} × line ${line.lineItemId}`).join(', ')

export interface ReturnListData {
  returns: Return[]
  state: string
  olderThanDays: string
  nextBeforeId: number | null
  flash: string | null
}

export function returnListPage(context: PageContext, data: ReturnListData): SafeHtml {
  const url = `${context.prefix}/returns`
  const query = (beforeId: number) => `${url}?${new URLSearchParams({ ...(data.state && { state: data.state }), ...(data.olderThanDays && { olderThanDays: data.olderThanDays }), beforeId: String(beforeId) })}`
  const rows = data.returns.map(
    (entry) => html`<tr data-return="${entry.id}"><td><a href="${`${url}/${entry.id}`}">${entry.reference}</a></td><td>${stateBadge(entry.state)}</td>
<td><a href="${`${context.prefix}/orders/${entry.orderId}`}">${entry.orderId}</a></td><td>${linesText(entry)}</td><td>${dateTime(entry.dateCreated, context.timeZone)}</td></tr>`,
  )
  return html`<h1>Returns</h1>${data.flash ? notice('ok', data.flash) : ''}
<form method="get" action="${url}" aria-label="Filter returns" class="filters">
${select('state', data.state, [['', 'Every state'], ...RETURN_STATES.map((state) => [state, RETURN_STATE_LABELS[state]] as const)], html` aria-label="State"`)}
<label for="input-olderThanDays">At least this many days old</label> ${textInput('olderThanDays', data.olderThanDays, html` inputmode="numeric" size="4"`)}
<button type="submit">Filter</button></form>
${data.returns.length === 0 ? html`<p class="meta">No returns.</p>` : scrollingTable('Returns', html`<table><thead><tr><th>Return</th><th>State</th><th>Order</th><th>Lines</th><th>Requested</th></tr></thead><tbody>${rows}</tbody></table>`)}
${data.nextBeforeId !== null ? html`<p><a href="${query(data.nextBeforeId)}" rel="next">Older returns</a></p>` : ''}`
}

export interface ReturnPageData {
  entry: Return
  history: ReturnHistoryEntry[]
  labelIntegrations: string[]
  errors: FieldErrors
  flash: string | null
}

export function returnPage(context: PageContext, data: ReturnPageData): SafeHtml {
  const { entry, errors } = data
  const base = `${context.prefix}/returns/${entry.id}`
  const manage = context.can.manageReturns === true
  const labelHref = entry.label ? safeHref(entry.label.url) : null
  const lineRows = entry.lines.map(
    (line) => html`<tr data-line="${line.lineItemId}"><td>${line.lineItemId}</td><td>${line.quantity}</td><td>${isolated(line.reason)}</td><td>${isolated(line.note)}</td>
<td>${line.received ? `${line.received.resellable} resellable, ${line.received.damaged} damaged, ${line.received.missing} missing` : '—'}</td></tr>`,
  )
  // The message field is named after its form (`message.rejected`): its id, its label's `for` and the
  // summary's link agree; the form posts it as `message`.
  const stateForm = (state: ReturnState, label: string, options: { message?: boolean; danger?: boolean } = {}) =>
    html`<form method="post" action="${`${base}/state`}" aria-label="${label}">${csrfField(context.csrf)}<input type="hidden" name="state" value="${state}">
${options.message ? field({ name: `message.${state}`, label: 'Message', errors }, (aria) => html`<input type="text" id="${`input-message.${state}`}" name="message" value=""${aria}>`) : ''}
<button type="submit"${options.danger ? html` class="danger"` : html` class="primary"`}>${label}</button></form>`
  const actions: SafeHtml[] = []
  // The error summary links only to what is on the page (a refusal may come back after the state moved on).
  const shown = new Set<string>()
  if (manage) {
    if (entry.state === 'requested' || entry.state === 'authorised') shown.add('message.rejected')
    if (entry.state === 'requested') actions.push(stateForm('authorised', 'Authorise'), stateForm('rejected', 'Reject', { message: true, danger: true }))
    if (entry.state === 'authorised') {
      if (context.can.buyLabels && data.labelIntegrations.length > 0) {
        actions.push(labelForm(context, base, data))
        for (const name of [...LABEL_FIELDS.keys(), 'label']) shown.add(name)
      }
      actions.push(html`<form method="post" action="${`${base}/tracking`}" aria-label="Tracking number by hand">${csrfField(context.csrf)}
${field({ name: 'trackingNumber', label: 'Tracking number (the customer ships it)', errors }, (aria) => textInput('trackingNumber', '', aria))}
${field({ name: 'carrier', label: 'Carrier', errors }, (aria) => textInput('carrier', '', aria))}
<button type="submit">Save tracking number</button></form>`)
      shown.add('trackingNumber').add('carrier')
      actions.push(stateForm('rejected', 'Reject', { message: true, danger: true }))
    }
    // A label bought and not used yet (the return not on its way) can be voided: EasyPost refunds it.
    if (context.can.buyLabels && entry.label && ['authorised', 'label_sent', 'rejected'].includes(entry.state)) {
      actions.push(html`<form method="post" action="${`${base}/label/void`}" aria-label="Void the return label" id="void-return-label">${csrfField(context.csrf)}
<button type="submit" class="danger">Void the label (refund)</button></form>`)
      shown.add('void')
    }
    if (['authorised', 'label_sent', 'in_transit', 'received'].includes(entry.state) && entry.dateReceived === null) {
      actions.push(receiveForm(context, base, entry, errors))
      shown.add('receive')
    }
    if (entry.state === 'received' && entry.dateReceived !== null) actions.push(stateForm('closed', 'Close'))
  }
  return html`${errorSummary(returnProblems(entry, errors, shown))}<h1>Return ${entry.reference}</h1>${data.flash ? notice('ok', data.flash) : ''}
<dl class="details"><dt>State</dt><dd>${stateBadge(entry.state)}${entry.stateMessage ? html` <span class="meta">${isolated(entry.stateMessage)}</span>` : ''}</dd>
<dt>Order</dt><dd><a href="${`${context.prefix}/orders/${entry.orderId}`}">${entry.orderId}</a></dd>
<dt>Tracking</dt><dd>${entry.trackingNumber ? html`${isolated(entry.carrier)} ${isolated(entry.service)} ${isolated(entry.trackingNumber)}` : '—'}</dd>
<dt>Label</dt><dd>${entry.label ? html`${labelHref ? html`<a href="${labelHref}" rel="noopener noreferrer" target="_blank">${entry.label.format ?? 'Label'}</a>` : entry.label.format ?? ''}${entry.label.cost ? ` · ${entry.label.cost.amount} ${entry.label.cost.currency}` : ''}` : entry.labelPending ? 'Purchase outcome not known yet: buy again to finish it.' : '—'}</dd>
<dt>Requested</dt><dd>${dateTime(entry.dateCreated, context.timeZone)}</dd>
<dt>Received</dt><dd>${dateTime(entry.dateReceived, context.timeZone)}</dd></dl>
<h2>Lines</h2>
${scrollingTable('Return lines', html`<table><thead><tr><th>Line</th><th>Quantity</th><th>Reason</th><th>Note</th><th>Arrived</th></tr></thead><tbody>${lineRows}</tbody></table>`)}
${actions.length > 0 ? html`<h2>Actions</h2>${actions}` : ''}
<h2>History</h2>
${scrollingTable('Return history', html`<table><thead><tr><th>When</th><th>From</th><th>To</th><th>Message</th><th>User</th><th>Source</th></tr></thead><tbody>${data.history.map(
    (row) => html`<tr><td>${dateTime(row.dateCreated, context.timeZone)}</td><td>${row.fromState ?? '—'}</td><td>${row.toState}</td><td>${isolated(row.message)}</td><td>${row.userId ?? '—'}</td><td>${row.source}</td></tr>`,
  )}</tbody></table>`)}`
}

/** The label form's fields and their labels (the routes file the service's `carrier` under `labelCarrier`). */
const LABEL_FIELDS = new Map([
  ['integration', 'Integration'],
  ['labelCarrier', 'Carrier'],
  ['service', 'Service'],
  ['weight', 'Weight'],
  ['weightUnit', 'Unit'],
])

/** A line's errors in the receive form: the service names a line `line <id>` (its sum) or `lines.<index>`. */
const receivedLineErrors = (errors: FieldErrors, line: { lineItemId: number }, index: number) => [...(errors[`line ${line.lineItemId}`] ?? []), ...(errors[`lines.${index}`] ?? [])]
const isLineKey = (entry: Return, name: string) => entry.lines.some((line, index) => name === `line ${line.lineItemId}` || name === `lines.${index}`)

/**
 * The return page's problems for its error summary: each field's message linking to its input (the
 * rejection's message, the tracking number, the label form's fields, a received line's first count),
 * the label's and the receipt's refusals to their forms; a state change's refusal (`form`) unlinked.
 */
function returnProblems(entry: Return, errors: FieldErrors, shown: ReadonlySet<string>) {
  const targets: Record<string, string> = {}
  const labels: Record<string, string> = { 'message.rejected': 'Message', trackingNumber: 'Tracking number', carrier: 'Carrier', label: 'Return label', void: 'Voiding the label', ...Object.fromEntries(LABEL_FIELDS) }
  entry.lines.forEach((line, index) => {
    for (const name of [`line ${line.lineItemId}`, `lines.${index}`]) {
      labels[name] = `Line ${line.lineItemId}`
      if (shown.has('receive')) targets[name] = `input-resellable.${line.lineItemId}`
    }
  })
  if (shown.has('label')) targets.label = 'buy-return-label'
  if (shown.has('void')) targets.void = 'void-return-label'
  for (const name of Object.keys(errors)) if (shown.has('receive') && name.startsWith('line') && !isLineKey(entry, name)) targets[name] = 'record-arrival'
  return summaryEntries(errors, new Set([...shown].filter((name) => name !== 'receive' && name !== 'label' && name !== 'void')), targets, labels)
}

function labelForm(context: PageContext, base: string, data: ReturnPageData): SafeHtml {
  const { errors } = data
  return html`<form method="post" action="${`${base}/label`}" aria-label="Buy the return label" id="buy-return-label" novalidate>${csrfField(context.csrf)}
${formErrors(Object.fromEntries(Object.entries(errors).filter(([name]) => name === 'label')), new Set())}
<div class="field-row">
${field({ name: 'integration', label: 'Integration', errors }, (aria) => select('integration', data.labelIntegrations[0] ?? '', data.labelIntegrations.map((handle) => [handle, handle] as const), aria))}
${field({ name: 'labelCarrier', label: 'Carrier', errors }, (aria) => textInput('labelCarrier', '', aria))}
${field({ name: 'service', label: 'Service', errors }, (aria) => textInput('service', '', aria))}
${field({ name: 'weight', label: 'Weight', errors }, (aria) => textInput('weight', '', html`${aria} inputmode="decimal"`))}
${field({ name: 'weightUnit', label: 'Unit', errors }, (aria) => select('weightUnit', 'kg', WEIGHT_UNITS.map((unit) => [unit, unit] as const), aria))}
</div><button type="submit" class="primary">Buy return label</button></form>`
}

/** What arrived, line by line: a line's refusal beside it, its counts marked invalid. */
function receiveForm(context: PageContext, base: string, entry: Return, errors: FieldErrors): SafeHtml {
  const rows = entry.lines.map((line, index) => {
    const messages = receivedLineErrors(errors, line, index)
    const errorId = `error-line-${line.lineItemId}`
    const aria = messages.length > 0 ? html` aria-invalid="true" aria-describedby="${errorId}"` : html``
    return html`<tr data-receive-line="${line.lineItemId}"><td>${line.lineItemId} (${line.quantity})${messages.length > 0 ? html`<p class="field-error" id="${errorId}" role="alert">${messages.join(' ')}</p>` : ''}</td>${(['resellable', 'damaged', 'missing'] as const).map(
      (condition) =>
        html`<td><input type="number" min="0" max="${line.quantity}" id="${`input-${condition}.${line.lineItemId}`}" name="${`${condition}.${line.lineItemId}`}" value="${condition === 'resellable' ? String(line.quantity) : '0'}" aria-label="${`Line ${line.lineItemId}: ${condition}`}"${aria}></td>`,
    )}</tr>`
  })
  return html`<form method="post" action="${`${base}/receive`}" aria-label="Record what arrived" id="record-arrival" novalidate>${csrfField(context.csrf)}
${formErrors(Object.fromEntries(Object.entries(errors).filter(([name]) => name.startsWith('line') && !isLineKey(entry, name))), new Set())}
${scrollingTable('What arrived', html`<table><thead><tr><th>Line (quantity)</th><th>Resellable</th><th>Damaged</th><th>Missing</th></tr></thead><tbody>${rows}</tbody></table>`)}
<button type="submit" class="primary">Record what arrived</button></form>`
}

/** The order page's returns: per line what shipped, what returns hold and what is left; the order's returns. */
export function orderReturnsSection(context: PageContext, lines: ReturnableLine[], returns: Return[]): SafeHtml {
  if (lines.every((line) => line.shipped === 0) && returns.length === 0) return html``
  return html`<h2 id="returns">Returns</h2>
${scrollingTable('Returnable quantities', html`<table><thead><tr><th>Line</th><th>Shipped</th><th>Returned</th><th>Returnable</th></tr></thead><tbody>${lines.map(
    (line) => html`<tr data-returnable="${line.lineItemId}"><td>${line.sku ?? line.name ?? line.lineItemId}</td><td>${line.shipped}</td><td>${line.returned}</td><td>${line.returnable}</td></tr>`,
  )}</tbody></table>`)}
${returns.length > 0 ? html`<ul>${returns.map((entry) => html`<li><a href="${`${context.prefix}/returns/${entry.id}`}">${entry.reference}</a> ${stateBadge(entry.state)} ${linesText(entry)}</li>`)}</ul>` : ''}`
}
