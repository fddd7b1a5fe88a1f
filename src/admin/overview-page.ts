// The store admins' landing page: shipments by status, shipped per day as a chart, late shipments,
// failing pushes and webhooks, the last ShipStation import.
import type { ExchangeActivity } from '../order-exchange/activity-log.js'
import type { WebhookSubscription } from '../outbox/webhooks.js'
import { OVERVIEW_DAYS, type ShipmentsOverview } from '../shipments/overview.js'
import { SHIPMENT_STATUSES } from '../model/shipment.js'
import { html, unsafeRaw, type SafeHtml } from '../html.js'
import { dateTime, scrollingTable, statusBadge } from './components.js'
import { orderLink, type PageContext } from './shipment-pages.js'

export interface OverviewPageData {
  figures: ShipmentsOverview
  /** The late shipments' order references by order id. */
  orderReferences: ReadonlyMap<number, string>
  /** Subscriptions with failures in a row or disabled; null when the user may not manage them (the section is left out). */
  failingWebhooks: WebhookSubscription[] | null
  /** The ShipStation section, for users who manage integrations; null leaves it out. */
  shipStation: { configured: boolean; lastExport: ExchangeActivity | null } | null
  /** Whether chart.js (an optional peer dependency) is installed: without it the numbers show as a table, open. */
  chart: boolean
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']
/** "4 Mar" of "2025-03-04". */
const dayLabel = (date: string) => `${Number(date.slice(8, 10))} ${MONTHS[Number(date.slice(5, 7)) - 1]}`

/**
 * JSON for a `<script type="application/json">` block: the browser does not decode entities there, so
 * the characters that could end the element or the script are written as JSON escapes instead.
 */
export function jsonScript(id: string, value: unknown): SafeHtml {
  const json = JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`)
  return html`<script type="application/json" id="${id}">${unsafeRaw(json)}</script>`
}

export function overviewPage(context: PageContext, data: OverviewPageData): SafeHtml {
  const { figures } = data
  const total = SHIPMENT_STATUSES.reduce((sum, status) => sum + figures.byStatus[status], 0)
  const shipped = figures.shippedPerDay.reduce((sum, day) => sum + day.count, 0)
  const days = figures.shippedPerDay.map((day) => ({ ...day, label: dayLabel(day.date) }))
  return html`<h1>Overview</h1>
<div class="overview">
<section class="card card-wide" aria-labelledby="overview-by-status"><h2 id="overview-by-status">Shipments by status</h2>
<ul class="status-counts">${SHIPMENT_STATUSES.map(
    (status) => html`<li><a href="${context.prefix}/shipments?status=${status}" data-status-count="${status}"><span class="count">${figures.byStatus[status]}</span>${statusBadge(status)}</a></li>`,
  )}</ul>
<p class="meta">${total} shipments in all (deleted ones left out).</p></section>
<section class="card card-wide" aria-labelledby="overview-shipped"><h2 id="overview-shipped">Shipped per day, last ${OVERVIEW_DAYS} days</h2>
${data.chart ? html`<div class="chart"><canvas id="shipped-chart" role="img" aria-label="${`Shipments shipped per day over the last ${OVERVIEW_DAYS} days: ${shipped} in all`}"></canvas></div>
${jsonScript('shipped-per-day-data', days)}` : html`<p class="meta" data-chart-missing>No chart: it is drawn with chart.js, which this host has not installed (npm install chart.js). The numbers:</p>`}
<details${data.chart ? '' : unsafeRaw(' open')}><summary>${shipped} shipped in ${OVERVIEW_DAYS} days: the numbers</summary>
<table class="shipped-per-day"><thead><tr><th>Day (${context.timeZone})</th><th class="num">Shipped</th></tr></thead><tbody>${days.map(
    (day) => html`<tr data-day="${day.date}"><td>${day.label} ${day.date.slice(0, 4)}</td><td class="num">${day.count}</td></tr>`,
  )}</tbody></table></details>
${data.chart ? html`<script src="${context.prefix}/assets/chart.umd.js" defer></script><script src="${context.prefix}/assets/overview.js" defer></script>` : ''}</section>
${lateSection(context, data)}
${failingPushesSection(context, figures.failingPushes)}
${data.failingWebhooks ? failingWebhooksSection(context, data.failingWebhooks) : ''}
${data.shipStation ? shipStationSection(context, data.shipStation) : ''}
</div>`
}

/** "Showing the 20 earliest of 31." when a list is cut at its bound. */
const shownOf = (shown: number, total: number, which: string) =>
  total > shown ? html`<p class="meta">Showing the ${shown} ${which} of ${total}.</p>` : ''

function lateSection(context: PageContext, data: OverviewPageData): SafeHtml {
  const { shipments, total } = data.figures.late
  return html`<section class="card card-wide" aria-labelledby="overview-late"><h2 id="overview-late">Late shipments <span class="badge ${total > 0 ? 'badge-attention' : 'badge-muted'}" data-count="${total}">${total}</span></h2>
<p class="hint">Scheduled to ship before now, neither shipped nor cancelled (enabled ones).</p>
${
  shipments.length === 0
    ? html`<p>No shipment is late.</p>`
    : html`${scrollingTable('Late shipments', html`<table class="late"><thead><tr><th>Shipment</th><th>Order</th><th>Status</th><th>Scheduled</th></tr></thead><tbody>${shipments.map(
        (shipment) => html`<tr data-shipment="${shipment.id}"><td><a href="${context.prefix}/shipments/${shipment.id}">${shipment.reference}</a></td>
<td>${orderLink(context, shipment.orderId, data.orderReferences)}</td><td>${statusBadge(shipment.status)}</td><td>${dateTime(shipment.dateScheduledShip, context.timeZone)}</td></tr>`,
      )}</tbody></table>`)}${shownOf(shipments.length, total, 'earliest')}`
}</section>`
}

function failingPushesSection(context: PageContext, failing: ShipmentsOverview['failingPushes']): SafeHtml {
  return html`<section class="card card-wide" aria-labelledby="overview-pushes"><h2 id="overview-pushes">Failing pushes <span class="badge ${failing.total > 0 ? 'badge-error' : 'badge-muted'}" data-count="${failing.total}">${failing.total}</span></h2>
${
  failing.pushes.length === 0
    ? html`<p>No push to an integration is failing.</p>`
    : html`${scrollingTable('Failing pushes', html`<table class="failing-pushes"><thead><tr><th>Shipment</th><th>Integration</th><th>Last attempt</th><th class="num">Attempts</th><th>Error</th></tr></thead><tbody>${failing.pushes.map(
        (push) => html`<tr data-shipment="${push.shipmentId}"><td><a href="${context.prefix}/shipments/${push.shipmentId}">${push.shipmentReference}</a></td>
<td>${context.can.manage ? html`<a href="${context.prefix}/integrations/${encodeURIComponent(push.integrationHandle)}">${push.integrationHandle}</a>` : push.integrationHandle}</td>
<td>${dateTime(push.lastPushAt, context.timeZone)}</td><td class="num">${push.pushAttempts}</td><td>${push.lastPushError}</td></tr>`,
      )}</tbody></table>`)}${shownOf(failing.pushes.length, failing.total, 'newest')}`
}</section>`
}

function failingWebhooksSection(context: PageContext, subscriptions: WebhookSubscription[]): SafeHtml {
  return html`<section class="card" aria-labelledby="overview-webhooks"><h2 id="overview-webhooks">Failing webhooks <span class="badge ${subscriptions.length > 0 ? 'badge-error' : 'badge-muted'}" data-count="${subscriptions.length}">${subscriptions.length}</span></h2>
${
  subscriptions.length === 0
    ? html`<p>Every webhook subscription is delivering.</p>`
    : html`<ul class="failing-webhooks">${subscriptions.map(
        (subscription) => html`<li data-webhook="${subscription.id}"><a href="${context.prefix}/webhooks/${subscription.id}">${subscription.url}</a>
<div class="meta">${
          subscription.enabled
            ? `${subscription.failureCount} ${subscription.failureCount === 1 ? 'failure' : 'failures'} in a row`
            : `Disabled${subscription.disabledReason ? `: ${subscription.disabledReason}` : ''}`
        }</div></li>`,
      )}</ul>`
}</section>`
}

function shipStationSection(context: PageContext, shipStation: NonNullable<OverviewPageData['shipStation']>): SafeHtml {
  const entry = shipStation.lastExport
  return html`<section class="card" aria-labelledby="overview-shipstation"><h2 id="overview-shipstation">Last ShipStation import</h2>
${
  !shipStation.configured
    ? html`<p class="meta">The order exchange with ShipStation is not configured.</p>`
    : entry === null
      ? html`<p>ShipStation has not imported orders yet.</p>`
      : html`<dl class="last-export" data-status-code="${entry.statusCode}">
<dt>When</dt><dd>${dateTime(entry.date, context.timeZone)}</dd>
<dt>Answer</dt><dd><span class="badge ${entry.statusCode < 400 ? 'badge-ok' : 'badge-error'}">${entry.statusCode}</span>${entry.reason ? html` ${entry.reason}` : ''}</dd>
<dt>Orders exported</dt><dd>${entry.ordersExported ?? '—'}${entry.page !== null ? html` <span class="meta">(page ${entry.page})</span>` : ''}</dd>
</dl>`
}
<p><a href="${context.prefix}/shipstation">The ShipStation page</a></p></section>`
}
