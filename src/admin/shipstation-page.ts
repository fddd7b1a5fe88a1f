// The ShipStation screen: what to paste into ShipStation, the settings in force, and the activity log.
import type { ExchangeActivity } from '../order-exchange/activity-log.js'
import { EXCHANGE_ACTIVITY_KEPT, EXCHANGE_ACTIVITY_REFUSED_KEPT } from '../order-exchange/activity-log.js'
import type { OrderExchangeSettings } from '../order-exchange/settings.js'
import type { DoctorReport } from '../order-exchange/doctor.js'
import { html, type SafeHtml } from '../html.js'
import { dateTime, notice, scrollingTable } from './components.js'

const yesNo = (value: boolean) => (value ? 'Yes' : 'No')

/** The connection doctor's form and, on the page answering it, its report or why it was not run. */
export interface DoctorSection {
  action: string
  csrf: string
  url: string
  report: DoctorReport | null
  refused: string | null
}

const DOCTOR_MARK: Record<DoctorReport['steps'][number]['outcome'], [string, string]> = { pass: ['badge-ok', 'Passed'], warn: ['badge-warn', 'Look at it'], fail: ['badge-error', 'Failed'], skip: ['badge-muted', 'Skipped'] }

function doctorSection(doctor: DoctorSection): SafeHtml {
  const { report } = doctor
  return html`<h2>Connection doctor</h2>
<p class="hint">Plays ShipStation against this site's Custom Store URL, from this server: the credentials as ShipStation sends them, the export window of the last 7 days, every page, each order against ShipStation's order schema, and a ship notification as a dry run that changes nothing.</p>
${doctor.refused ? notice('error', doctor.refused) : ''}
<form method="post" action="${doctor.action}" aria-label="Connection doctor" novalidate>
<input type="hidden" name="_csrf" value="${doctor.csrf}">
<div class="field"><label for="input-doctor-url">Custom Store URL</label><input type="url" id="input-doctor-url" name="url" value="${doctor.url}"></div>
<button type="submit" class="primary">Run the doctor</button>
</form>
${report
    ? html`${notice(report.ok ? 'ok' : 'error', report.ok ? 'Every step passed: ShipStation can import from this URL.' : 'ShipStation cannot import from this URL as it is: see the steps.')}
<ol class="doctor">${report.steps.map(
        (step) => html`<li data-step="${step.step}"><span class="badge ${DOCTOR_MARK[step.outcome][0]}">${DOCTOR_MARK[step.outcome][1]}</span> <strong>${step.step}</strong>: ${step.detail}${step.fix ? html`<div class="meta">Fix: ${step.fix}</div>` : ''}</li>`,
      )}</ol>`
    : ''}`
}

export function shipStationPage(
  exchange: { url: string; settings: OrderExchangeSettings; trackingFieldProblems: readonly string[]; activity: ExchangeActivity[] } | null,
  timeZone: string,
  doctor: DoctorSection | null = null,
): SafeHtml {
  if (!exchange) {
    return html`<h1>ShipStation</h1>${notice('error', html`The order exchange is not configured: the host registers the plugin without the <code>orderExchange</code> option.`)}`
  }
  const { settings } = exchange
  const rows: Array<[string, string]> = [
    ['Page Size for Orders', String(settings.pageSize)],
    ['Store field', settings.storeField ?? '— (the store parameter is ignored)'],
    ['Fail the export on an invalid order', yesNo(settings.failOnValidation)],
    ['Status Handle (ship notifications)', settings.shippedStatus || '— (blank: ship notifications fail)'],
    ['Tracking field', `${settings.tracking.matrix || '—'} (carrier: ${settings.tracking.carrier || '—'}, service: ${settings.tracking.service || '—'}, tracking number: ${settings.tracking.trackingNumber || '—'})`],
    ['Credentials in the query (SS-UserName / SS-Password)', yesNo(settings.acceptQueryCredentials)],
    ['Ship notifications move open shipments to shipped', yesNo(settings.updateShipments)],
    ['Integration recorded on those moves', settings.integrationHandle || '—'],
    ['Site URL for image links', settings.siteUrl ?? '— (the origin of each request)'],
  ]
  return html`<h1>ShipStation</h1>
<h2>Connect ShipStation</h2>
<p>In ShipStation, add a <strong>Custom Store</strong> and paste these:</p>
<table class="connect"><tbody>
<tr><th>URL to Custom XML Page</th><td><code data-copy="url">${exchange.url}</code></td></tr>
<tr><th>Username</th><td><code data-copy="username">${settings.username}</code></td></tr>
<tr><th>Password</th><td>The password set on this site (not shown here).</td></tr>
</tbody></table>
${doctor ? doctorSection(doctor) : ''}
<h2>Settings in force</h2>
${exchange.trackingFieldProblems.length > 0
    ? notice('error', html`Tracking numbers from ShipStation are not stored: ${exchange.trackingFieldProblems.map((problem, index) => html`${index > 0 ? '; ' : ''}${problem}`)}. Declare the field in the plugin's <code>orderFields</code> option (a <code>matrix</code> field with these sub-fields), or point <code>orderExchange.trackingField</code> at one.`)
    : ''}
<table class="settings"><tbody>${rows.map(([label, value]) => html`<tr><th>${label}</th><td>${value}</td></tr>`)}</tbody></table>
<h2>Activity</h2>
<p class="hint">Every request ShipStation made, newest first: the last 100 answered and the last 100 refused (the log keeps at least the last ${EXCHANGE_ACTIVITY_KEPT} answered and ${EXCHANGE_ACTIVITY_REFUSED_KEPT} refused). No export requests, or only refused ones, explain orders that do not show up in ShipStation.</p>
${exchange.activity.length === 0 ? html`<p>No requests yet: ShipStation has not called this site.</p>` : scrollingTable('Activity', html`<table class="activity"><thead><tr><th>Time</th><th>Action</th><th>Page / order</th><th>Orders exported</th><th>Status</th><th>Reason</th></tr></thead><tbody>${exchange.activity.map(
    (entry) => html`<tr data-status-code="${entry.statusCode}"><td class="meta">${dateTime(entry.date, timeZone)}</td><td>${entry.action || '—'}</td>
<td>${entry.page !== null ? `page ${entry.page}` : (entry.orderNumber ?? '—')}</td><td>${entry.ordersExported ?? '—'}</td>
<td><span class="badge ${entry.statusCode < 400 ? 'badge-ok' : 'badge-error'}">${entry.statusCode}</span></td><td>${entry.reason ?? ''}</td></tr>`,
  )}</tbody></table>`)}`
}
