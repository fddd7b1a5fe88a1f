// The outbound webhook screens: the subscriptions with their state, the create form (the new secret is
// shown once, on the page that answers the creation), and a subscription's recent deliveries.
import type { WebhookDelivery, WebhookSubscription } from '../outbox/webhooks.js'
import { WEBHOOK_EVENT_NAMES } from '../outbox/event-names.js'
import { html, type SafeHtml } from '../html.js'
import { csrfField, dateTime, errorSummary, field, fieldErrors, formErrors, notice, scrollingTable, summaryEntries, textInput, type FieldErrors } from './components.js'
import type { PageContext } from './shipment-pages.js'

/** What the create form holds, as typed. */
export interface WebhookFormValues {
  url: string
  events: string[]
  description: string
}

export const emptyWebhookForm = (): WebhookFormValues => ({ url: '', events: [], description: '' })

const first = (value: unknown) => (typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '')
const all = (value: unknown) => (Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : typeof value === 'string' ? [value] : [])

/** The subscription a submitted form describes, in the service's input shape. */
export function readWebhookForm(body: Record<string, unknown>) {
  const values: WebhookFormValues = { url: first(body.url), events: [...new Set(all(body.events))], description: first(body.description) }
  const description = values.description.trim()
  return {
    values,
    // Unknown event names are passed on, so the service names them in its refusal.
    input: { url: values.url.trim(), events: values.events as WebhookSubscription['events'], description: description === '' ? null : description },
  }
}

/** The service's "field: message" as field errors of the form. */
export function webhookErrors(message: string): FieldErrors {
  const match = /^(url|events|description): (.*)$/s.exec(message)
  return match ? { [match[1]]: [match[2]] } : { form: [message] }
}

const eventLabel = (name: string) => (name === '*' ? 'All events' : name)

function enabledBadge(subscription: WebhookSubscription): SafeHtml {
  return html`<span class="badge ${subscription.enabled ? 'badge-ok' : 'badge-muted'}">${subscription.enabled ? 'Enabled' : 'Disabled'}</span>`
}

function subscriptionActions(context: PageContext, subscription: WebhookSubscription): SafeHtml {
  const base = `${context.prefix}/webhooks/${subscription.id}`
  return html`<form method="post" action="${base}/${subscription.enabled ? 'disable' : 'enable'}">${csrfField(context.csrf)}<button type="submit">${subscription.enabled ? 'Disable' : 'Enable'}</button></form>
<form method="post" action="${base}/delete" data-confirm="Delete this subscription? Its pending deliveries are dropped.">${csrfField(context.csrf)}<button type="submit">Delete</button></form>`
}

export interface WebhookListData {
  subscriptions: WebhookSubscription[]
  values: WebhookFormValues
  errors: FieldErrors
  flash: string | null
  /** The subscription just created, with its secret: shown on this answer only. */
  created: (WebhookSubscription & { secret: string }) | null
}

export function webhookListPage(context: PageContext, data: WebhookListData): SafeHtml {
  const { subscriptions, values, errors } = data
  return html`${errorSummary(summaryEntries(errors, new Set(['url', 'description']), { events: 'field-events' }, { url: 'URL', events: 'Events', description: 'Description' }))}<h1>Webhooks</h1>
${data.flash ? notice('ok', data.flash) : ''}
${data.created ? notice('ok', html`<strong>Subscription created.</strong> Its signing secret is shown this once; keep it with the receiver to verify deliveries:
<p><code class="webhook-secret" data-webhook-secret>${data.created.secret}</code></p>`) : ''}
<p class="hint">Outbound webhooks: the package's events sent to your URLs, signed (Standard Webhooks), retried after failures.</p>
${scrollingTable('Webhook subscriptions', html`<table class="webhooks"><thead><tr><th>URL</th><th>Events</th><th>Enabled</th><th>Failures</th><th>Disabled because</th><th>Actions</th></tr></thead><tbody>${subscriptions.map(
    (subscription) => html`<tr data-webhook="${subscription.id}"><td><a href="${context.prefix}/webhooks/${subscription.id}">${subscription.url}</a>${subscription.description ? html`<div class="meta">${subscription.description}</div>` : ''}</td>
<td>${subscription.events.map((name, index) => html`${index > 0 ? ', ' : ''}<code>${eventLabel(name)}</code>`)}</td>
<td>${enabledBadge(subscription)}</td><td>${subscription.failureCount}</td><td>${subscription.disabledReason ?? ''}</td>
<td><div class="toolbar">${subscriptionActions(context, subscription)}</div></td></tr>`,
  )}</tbody></table>`)}
${subscriptions.length === 0 ? html`<p>No webhook subscriptions yet.</p>` : ''}
<h2>New subscription</h2>
<form method="post" action="${context.prefix}/webhooks" novalidate aria-label="New webhook subscription">
${csrfField(context.csrf)}
${formErrors(errors, new Set(['url', 'events', 'description']))}
${field({ name: 'url', label: 'URL', errors, hint: 'An absolute http or https URL that receives the deliveries.' }, (aria) => textInput('url', values.url, aria, 'url'))}
<fieldset class="field${(errors.events ?? []).length > 0 ? ' has-error' : ''}" data-field="events" id="field-events"><legend>Events</legend>
${['*', ...WEBHOOK_EVENT_NAMES].map(
    (name) => html`<label><input type="checkbox" name="events" value="${name}"${values.events.includes(name) ? html` checked` : ''}> ${eventLabel(name)}</label> `,
  )}
${fieldErrors(errors, 'events')}</fieldset>
${field({ name: 'description', label: 'Description (optional)', errors }, (aria) => textInput('description', values.description, aria))}
<button type="submit" class="primary">Create</button>
</form>`
}

export function webhookPage(context: PageContext, subscription: WebhookSubscription, deliveries: WebhookDelivery[], flash: string | null): SafeHtml {
  return html`<h1>Webhook ${subscription.url}</h1>
${flash ? notice(flash.startsWith('Not ') ? 'error' : 'ok', flash) : ''}
<p><a href="${context.prefix}/webhooks">All webhooks</a></p>
<dl class="webhook-details">
<dt>Events</dt><dd>${subscription.events.map((name, index) => html`${index > 0 ? ', ' : ''}<code>${eventLabel(name)}</code>`)}</dd>
<dt>Description</dt><dd>${subscription.description ?? '—'}</dd>
<dt>Enabled</dt><dd>${enabledBadge(subscription)}</dd>
<dt>Failures in a row</dt><dd>${subscription.failureCount}</dd>
${subscription.disabledReason ? html`<dt>Disabled because</dt><dd>${subscription.disabledReason}</dd>` : ''}
<dt>Created</dt><dd class="meta">${dateTime(subscription.dateCreated, context.timeZone)}</dd>
</dl>
<div class="toolbar">${subscriptionActions(context, subscription)}</div>
<h2>Recent deliveries</h2>
${deliveries.length === 0 ? html`<p class="meta">No deliveries yet.</p>` : scrollingTable('Recent deliveries', html`<table class="deliveries"><thead><tr><th>Time</th><th>Event</th><th>State</th><th>Attempts</th><th>Last error</th><th></th></tr></thead><tbody>${deliveries.map(
    (delivery) => html`<tr data-delivery="${delivery.deliveryId}"><td class="meta">${dateTime(delivery.dateCreated, context.timeZone)}</td><td><code>${delivery.eventName}</code></td>
<td>${stateBadge(delivery.state)}${delivery.nextAttemptAt ? html` <span class="meta">next attempt ${dateTime(delivery.nextAttemptAt, context.timeZone)}</span>` : ''}</td>
<td>${delivery.attempts}</td><td>${delivery.lastError ?? ''}</td>
<td>${delivery.state === 'pending' ? '' : html`<form method="post" action="${context.prefix}/webhooks/${subscription.id}/redeliver">${csrfField(context.csrf)}<input type="hidden" name="deliveryId" value="${delivery.deliveryId}"><button type="submit">Redeliver</button></form>`}</td></tr>`,
  )}</tbody></table>`)}`
}

const stateBadge = (state: WebhookDelivery['state']) =>
  html`<span class="badge ${state === 'done' ? 'badge-ok' : state === 'failed' ? 'badge-error' : 'badge-muted'}">${state}</span>`
