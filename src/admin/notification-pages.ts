// The customer notification screens: the definitions, the create and edit form, a definition's recent
// deliveries with their attempt logs, and the test send that renders against a real shipment.
import { NOTIFICATION_TEMPLATES } from '../notifications/templates.js'
import { NOTIFICATION_TRIGGERS, RETURN_TRIGGERS, type Notification, type NotificationInput, type NotificationService, type NotificationTrigger, type RenderedNotification } from '../notifications/service.js'
import { SHIPMENT_STATUSES, type ShipmentStatus } from '../model/shipment.js'
import { html, type SafeHtml } from '../html.js'
import { csrfField, dateTime, errorSummary, field, fieldErrors, formErrors, notice, returnStateBadge, scrollingTable, select, STATUS_LABELS, statusBadge, summaryEntries, textInput, type FieldErrors, type PageContext } from './components.js'

export type NotificationDelivery = Awaited<ReturnType<NotificationService['deliveries']>>[number]

/** What the definition form holds, as typed. */
export interface NotificationFormValues {
  name: string
  enabled: boolean
  statuses: string[]
  /** Carrier milestones, `estimateLater` and return events. */
  triggers: string[]
  recipient: string
  /** One address per line. */
  addresses: string
  subject: string
  html: string
  text: string
  language: string
}

/** A new definition's form: the shipped status, the customer, a starting template to edit. */
export const emptyNotificationForm = (): NotificationFormValues => ({
  name: '',
  enabled: true,
  statuses: ['shipped'],
  triggers: [],
  recipient: 'customer',
  addresses: '',
  subject: 'Your order {{ order.reference }} has shipped',
  html: '<p>Your order {{ order.reference }} is on its way.</p>\n<p><a href="{{ trackingLink }}">Track your parcel</a></p>',
  text: 'Your order {{ order.reference }} is on its way.\nTrack your parcel: {{ trackingLink }}',
  language: '',
})

export const notificationFormValues = (notification: Notification): NotificationFormValues => ({
  name: notification.name,
  enabled: notification.enabled,
  statuses: [...notification.statuses],
  triggers: [...notification.triggers],
  recipient: notification.recipient,
  addresses: notification.addresses.join('\n'),
  subject: notification.subject,
  html: notification.html,
  text: notification.text,
  language: notification.language ?? '',
})

const first = (value: unknown) => (typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '')
const all = (value: unknown) => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : typeof value === 'string' ? [value] : [])
// Browsers send a textarea's line breaks as CRLF; templates are stored with LF.
const lines = (value: unknown) => first(value).replace(/\r\n?/g, '\n')

/** The definition a submitted form describes, in the service's input shape. */
export function readNotificationForm(body: Record<string, unknown>): { values: NotificationFormValues; input: NotificationInput } {
  const values: NotificationFormValues = {
    name: first(body.name),
    // A checkbox left unchecked is not sent at all.
    enabled: first(body.enabled) === 'true',
    statuses: [...new Set(all(body.statuses))],
    triggers: [...new Set(all(body.triggers))],
    recipient: first(body.recipient),
    addresses: lines(body.addresses),
    subject: lines(body.subject),
    html: lines(body.html),
    text: lines(body.text),
    language: first(body.language),
  }
  const language = values.language.trim()
  return {
    values,
    // Unknown statuses and recipients are passed on, so the service names them in its refusal.
    input: {
      name: values.name,
      enabled: values.enabled,
      statuses: values.statuses as ShipmentStatus[],
      triggers: values.triggers as NotificationTrigger[],
      recipient: values.recipient as NotificationInput['recipient'],
      addresses: values.addresses.split(/[\n,;]+/).map((address) => address.trim()).filter((address) => address !== ''),
      subject: values.subject,
      html: values.html,
      text: values.text,
      language: language === '' ? null : language,
    },
  }
}

/** The test send form, as typed: a shipment id or reference, and an optional address. */
export interface NotificationTestValues {
  shipment: string
  to: string
}

export interface NotificationTestResult extends RenderedNotification {
  sent: boolean
  shipmentReference: string
}

const transportMissing = () =>
  notice('error', html`No mail transport is configured (the <code>notifications.sendMail</code> option): definitions are kept and a test renders, but nothing is sent.`)

function enabledBadge(enabled: boolean): SafeHtml {
  return html`<span class="badge ${enabled ? 'badge-ok' : 'badge-muted'}">${enabled ? 'Enabled' : 'Disabled'}</span>`
}

const recipientText = (notification: Notification) =>
  notification.recipient === 'customer'
    ? "The order's customer"
    : notification.recipient === 'addresses'
      ? notification.addresses.join(', ')
      : `The order's customer, ${notification.addresses.join(', ')}`

/** The triggers as people read them. */
export const TRIGGER_LABELS: Readonly<Record<NotificationTrigger, string>> = {
  outForDelivery: 'Out for delivery',
  attempted: 'Delivery attempted',
  exception: 'Exception or failure',
  delivered: 'Delivered',
  returnedToSender: 'Returned to sender',
  estimateLater: 'Estimate moved later',
  returnRequested: 'Return requested',
  returnAuthorised: 'Return authorised',
  returnRejected: 'Return rejected',
  returnLabelSent: 'Return label sent',
  returnReceived: 'Return received',
  returnClosed: 'Return closed',
}

const isReturnTrigger = (trigger: NotificationTrigger) => (RETURN_TRIGGERS as readonly string[]).includes(trigger)

export function notificationListPage(context: PageContext, data: { notifications: Notification[]; canSend: boolean; flash: string | null }): SafeHtml {
  return html`<h1>Notifications</h1>
${data.flash ? notice('ok', data.flash) : ''}
${data.canSend ? '' : transportMissing()}
<p class="hint">Mails to customers (or fixed addresses) when a shipment reaches a status, sent through the outbox and retried when the transport fails.</p>
<p><a class="button" href="${context.prefix}/notifications/new">New notification</a></p>
<h2>Ready-made notifications</h2>
<p class="hint">Each is added disabled, to read and enable.</p>
<div class="toolbar">${Object.entries(NOTIFICATION_TEMPLATES).map(
    ([key, template]) => html`<form method="post" action="${context.prefix}/notifications/templates/${key}" class="inline">${csrfField(context.csrf)}<button type="submit" data-template="${key}">Add "${template.name}"</button></form> `,
  )}</div>
${data.notifications.length === 0 ? html`<p>No notifications yet.</p>` : scrollingTable('Notifications', html`<table class="notifications"><thead><tr><th>Name</th><th>Statuses</th><th>Recipient</th><th>Enabled</th></tr></thead><tbody>${data.notifications.map(
    (notification) => html`<tr data-notification="${notification.id}"><td><a href="${context.prefix}/notifications/${notification.id}">${notification.name}</a></td>
<td>${notification.statuses.map((status) => html`${statusBadge(status)} `)}${notification.triggers.map((trigger) => html`<span class="badge badge-trigger" data-trigger="${trigger}">${TRIGGER_LABELS[trigger] ?? trigger}</span> `)}</td><td>${recipientText(notification)}</td><td>${enabledBadge(notification.enabled)}</td></tr>`,
  )}</tbody></table>`)}`
}

export interface NotificationPageData {
  notification: Notification | null
  values: NotificationFormValues
  errors: FieldErrors
  flash: string | null
  canSend: boolean
  deliveries: NotificationDelivery[]
  /** The deliveries' shipment references by shipment id; a shipment no longer stored is missing. */
  shipmentReferences: ReadonlyMap<number, string>
  /** The deliveries' return references by return id. */
  returnReferences: ReadonlyMap<number, string>
  test: { values: NotificationTestValues; errors: FieldErrors; result: NotificationTestResult | null }
}

const FORM_FIELDS = new Set(['name', 'enabled', 'statuses', 'triggers', 'recipient', 'addresses', 'subject', 'html', 'text', 'language'])

const VARIABLES =
  'shipment (reference, status, statusLabel, carrier, trackingNumber, trackingUrl, items...), order (reference, statusHandle, email), items (name, sku, quantity), trackingLink, trackingPage, carrierTrackingUrl, fromStatus, toStatus, fromStatusLabel, toStatusLabel, message; on a return: return (reference, state, stateLabel, message, lines (name, sku, quantity, reason, note, received), trackingNumber, trackingUrl, carrier, labelUrl), order, fromState, toState, toStateLabel, message'

export function notificationPage(context: PageContext, data: NotificationPageData): SafeHtml {
  const { notification, values, errors } = data
  const action = notification ? `${context.prefix}/notifications/${notification.id}` : `${context.prefix}/notifications`
  const template = (name: 'subject' | 'html' | 'text', label: string, hint: string) =>
    field({ name, label, errors, hint }, (aria) => html`<textarea id="${`input-${name}`}" name="${name}" class="template${name === 'subject' ? ' template-line' : ''}" spellcheck="false"${aria}>${values[name]}</textarea>`)
  const triggerBoxes = (triggers: readonly NotificationTrigger[]) =>
    triggers.map((trigger) => html`<label class="checkbox"><input type="checkbox" name="triggers" value="${trigger}"${values.triggers.includes(trigger) ? html` checked` : ''}> ${TRIGGER_LABELS[trigger]}</label> `)
  const problems = [...summaryEntries(errors, FORM_FIELDS, { statuses: 'field-statuses', triggers: 'field-triggers', enabled: 'field-enabled' }), ...summaryEntries(data.test.errors, new Set(['shipment', 'to']))]
  return html`${errorSummary(problems)}<h1>${notification ? html`Notification ${notification.name}` : 'New notification'}</h1>
${data.flash ? notice('ok', data.flash) : ''}
${data.canSend ? '' : transportMissing()}
<p><a href="${context.prefix}/notifications">All notifications</a></p>
<form method="post" action="${action}" novalidate aria-label="Notification" class="notification-form">
${csrfField(context.csrf)}
${formErrors(errors, FORM_FIELDS)}
${field({ name: 'name', label: 'Name', errors }, (aria) => textInput('name', values.name, aria))}
<fieldset class="field${(errors.statuses ?? []).length > 0 ? ' has-error' : ''}" data-field="statuses" id="field-statuses"><legend>Sent when a shipment reaches</legend>
${SHIPMENT_STATUSES.map(
    (status) => html`<label class="checkbox"><input type="checkbox" name="statuses" value="${status}"${values.statuses.includes(status) ? html` checked` : ''}> ${STATUS_LABELS[status]}</label> `,
  )}
${fieldErrors(errors, 'statuses')}</fieldset>
<fieldset class="field${(errors.triggers ?? []).length > 0 ? ' has-error' : ''}" data-field="triggers" id="field-triggers"><legend>Or sent on the carrier's news</legend>
${triggerBoxes(NOTIFICATION_TRIGGERS.filter((trigger) => !isReturnTrigger(trigger)))}
${fieldErrors(errors, 'triggers')}</fieldset>
<fieldset class="field" data-field="return-triggers"><legend>Or sent when a return</legend>
${triggerBoxes(RETURN_TRIGGERS)}
<p class="hint">A return's mail sees <code>return</code> in place of <code>shipment</code>.</p></fieldset>
${field({ name: 'recipient', label: 'Recipient', errors }, (aria) => select('recipient', values.recipient, [['customer', "The order's customer (its email)"], ['addresses', 'These addresses'], ['customerAndAddresses', "The order's customer and these addresses"]], aria))}
${field({ name: 'addresses', label: 'Addresses', errors, hint: 'One per line; used when the recipient names these addresses (staff notices).' }, (aria) => html`<textarea id="input-addresses" name="addresses"${aria}>${values.addresses}</textarea>`)}
${template('subject', 'Subject', 'Liquid, plain text, one line.')}
${template('html', 'HTML body', 'Liquid; every {{ output }} is escaped.')}
${template('text', 'Text body', 'Liquid, plain text.')}
<p class="hint">Variables: ${VARIABLES}.</p>
${field({ name: 'language', label: 'Language (optional)', errors, hint: 'A language tag such as "en" or "de-CH", passed to the transport.' }, (aria) => textInput('language', values.language, aria))}
<div class="field" data-field="enabled" id="field-enabled"><label class="checkbox"><input type="checkbox" name="enabled" value="true"${values.enabled ? html` checked` : ''}> Enabled</label>${fieldErrors(errors, 'enabled')}</div>
<button type="submit" class="primary">${notification ? 'Save' : 'Create'}</button>
</form>
${notification ? definitionExtras(context, notification, data) : ''}`
}

function definitionExtras(context: PageContext, notification: Notification, data: NotificationPageData): SafeHtml {
  const base = `${context.prefix}/notifications/${notification.id}`
  const { values, errors, result } = data.test
  return html`<form method="post" action="${base}/delete" data-confirm="Delete this notification? Mails not sent yet are dropped." class="toolbar">${csrfField(context.csrf)}<button type="submit" class="danger">Delete</button></form>
<h2>Send a test</h2>
<p class="hint">Renders against a real shipment, as if it had just reached its current status (or a return, by its reference, as if it had just reached its state), and sends it to the address given, else to the definition's recipients${data.canSend ? '' : ' (no transport: rendered only)'}.</p>
<form method="post" action="${base}/test" novalidate aria-label="Send a test" class="toolbar test-form">
${csrfField(context.csrf)}
${formErrors(errors, new Set(['shipment', 'to']))}
${field({ name: 'shipment', label: 'Shipment (id or reference) or return (reference)', errors }, (aria) => textInput('shipment', values.shipment, aria))}
${field({ name: 'to', label: 'To (optional)', errors }, (aria) => textInput('to', values.to, aria, 'email'))}
<button type="submit">Send test</button>
</form>
${result ? testResult(result, data.canSend) : ''}
<h2>Recent deliveries</h2>
${data.deliveries.length === 0 ? html`<p class="meta">No deliveries yet.</p>` : scrollingTable('Recent deliveries', html`<table class="deliveries"><thead><tr><th>Time</th><th>Shipment or return</th><th>Status reached</th><th>State</th><th>Attempts (newest first)</th></tr></thead><tbody>${data.deliveries.map(
    (delivery) => html`<tr data-delivery="${delivery.id}"><td class="meta">${dateTime(delivery.dateCreated, context.timeZone)}</td><td>${delivery.returnId !== null ? deliveryReturn(context, delivery.returnId, data.returnReferences) : deliveryShipment(context, delivery.shipmentId ?? 0, data.shipmentReferences)}</td>
<td>${delivery.returnId !== null ? returnStateBadge(delivery.toStatus) : statusBadge(delivery.toStatus)}</td><td>${deliveryState(delivery.state)}</td>
<td>${delivery.attempts.length === 0 ? html`<span class="meta">Not attempted yet</span>` : html`<ul class="attempts">${delivery.attempts.map(
      (attempt) => html`<li><span class="meta">${dateTime(attempt.date, context.timeZone)}</span> ${attemptOutcome(attempt.error)}</li>`,
    )}</ul>`}</td></tr>`,
  )}</tbody></table>`)}`
}

function testResult(result: NotificationTestResult, canSend: boolean): SafeHtml {
  const outcome = result.sent
    ? notice('ok', html`Sent to ${result.to.join(', ')}.`)
    : notice('error', !canSend ? 'Not sent: no mail transport is configured.' : 'Not sent: no recipient (the order has no valid customer email; enter an address).')
  // The preview is a sandboxed frame (no scripts, no same origin) under the admin pages' policy, which
  // the srcdoc document inherits; the markup is also shown as text.
  return html`<section class="test-result" aria-label="Test result" data-sent="${String(result.sent)}">
${outcome}
<table class="rendered"><tbody>
<tr><th>Rendered for</th><td>${result.shipmentReference}</td></tr>
<tr><th>To</th><td>${result.to.length > 0 ? result.to.join(', ') : '—'}</td></tr>
<tr><th>Subject</th><td data-rendered="subject">${result.subject}</td></tr>
</tbody></table>
<h3>HTML</h3>
<p class="hint">Previewed under the admin pages' security policy: inline styles and images from other sites are not shown here; the mail keeps them.</p>
<iframe class="mail-preview" title="HTML preview" sandbox="" referrerpolicy="no-referrer" srcdoc="${result.html}"></iframe>
<details><summary>HTML source</summary><pre data-rendered="html">${result.html}</pre></details>
<h3>Text</h3>
<pre data-rendered="text">${result.text}</pre>
</section>`
}

// A shipment gone since its delivery has no page to link to: its id is all there is to show.
function deliveryShipment(context: PageContext, shipmentId: number, references: ReadonlyMap<number, string>): SafeHtml {
  const reference = references.get(shipmentId)
  return reference === undefined ? html`<span class="meta">#${shipmentId}</span>` : html`<a href="${context.prefix}/shipments/${shipmentId}">${reference}</a>`
}

function deliveryReturn(context: PageContext, returnId: number, references: ReadonlyMap<number, string>): SafeHtml {
  const reference = references.get(returnId)
  return reference === undefined ? html`<span class="meta">Return #${returnId}</span>` : html`<a href="${context.prefix}/returns/${returnId}" data-return="${returnId}">Return ${reference}</a>`
}

// How the outbox words an attempt that did not fail: a job with nothing to send (src/outbox/dispatcher.ts)
// and an attempt whose instance stopped answering before it told the outcome (TAKEN_OVER_ATTEMPT_ERROR).
const SKIPPED_PREFIX = 'Skipped: '
const UNKNOWN_PREFIX = 'Outcome unknown: '

/** An attempt as it went: sent, skipped (nothing to send), outcome unknown, or failed, with its reason. */
function attemptOutcome(error: string | null): SafeHtml {
  if (error === null) return html`<span class="badge badge-ok">sent</span>`
  if (error.startsWith(SKIPPED_PREFIX)) return html`<span class="badge badge-skipped">skipped</span> ${error.slice(SKIPPED_PREFIX.length)}`
  if (error.startsWith(UNKNOWN_PREFIX)) return html`<span class="badge badge-unknown">unknown</span> ${error.slice(UNKNOWN_PREFIX.length)}`
  return html`<span class="badge badge-error">failed</span> ${error}`
}

const deliveryState = (state: string) =>
  html`<span class="badge ${state === 'done' ? 'badge-ok' : state === 'failed' ? 'badge-error' : 'badge-muted'}">${state}</span>`

/** The tracking link block of a shipment's page: a field to copy it from, and "Revoke link". */
export function trackingLinkSection(context: PageContext, shipment: { id: number; dateDeleted: string | null }, url: string): SafeHtml {
  return html`<section class="tracking-link" aria-label="Public tracking link">
<h2>Public tracking link</h2>
<div class="field" data-field="trackingLink"><label for="tracking-link">Link for the customer</label>
<div class="field-row"><input type="text" id="tracking-link" value="${url}" readonly data-tracking-link><button type="button" data-copy-from="tracking-link" hidden>Copy</button></div>
<p class="hint">${shipment.dateDeleted ? 'The shipment is deleted: its link answers 404.' : html`No login: whoever has the link sees the status, the timeline, the carrier and the items. <a href="${url}" target="_blank" rel="noopener noreferrer">Open</a>`}</p></div>
${context.can.edit ? html`<form method="post" action="${context.prefix}/shipments/${shipment.id}/tracking-link/revoke" data-confirm="Revoke this link? Every link given out so far stops working.">${csrfField(context.csrf)}<button type="submit">Revoke link</button></form>` : ''}
</section>`
}
