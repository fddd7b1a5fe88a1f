// The system page: the health report for people, the jobs that failed for good (retry or dismiss), the
// provider calls that failed in the last day in the provider's words, the versions and the migrations.
import { html, type SafeHtml } from '../html.js'
import type { HealthStatus } from '../health/service.js'
import type { SystemOverview } from '../health/system.js'
import { csrfField, dateTime, notice, scrollingTable } from './components.js'
import type { PageContext } from './shipment-pages.js'

const STATUS_LABEL: Record<HealthStatus, string> = { ok: 'OK', warn: 'Look at it', fail: 'Failing' }
const statusBadge = (status: HealthStatus) => html`<span class="badge ${status === 'ok' ? 'badge-ok' : status === 'warn' ? 'badge-warn' : 'badge-error'}">${STATUS_LABEL[status]}</span>`

function jobActions(context: PageContext, messageId: string): SafeHtml {
  return html`<div class="toolbar"><form method="post" action="${context.prefix}/system/jobs/retry">${csrfField(context.csrf)}<input type="hidden" name="messageId" value="${messageId}"><button type="submit">Retry</button></form>
<form method="post" action="${context.prefix}/system/jobs/dismiss" data-confirm="Dismiss this job? It will not be tried again.">${csrfField(context.csrf)}<input type="hidden" name="messageId" value="${messageId}"><button type="submit">Dismiss</button></form></div>`
}

export function systemPage(context: PageContext, system: SystemOverview, flash: string | null): SafeHtml {
  const { health, failedJobs, failedProviderCalls, versions, migrations } = system
  return html`<h1>System</h1>
${flash ? notice(flash.startsWith('Not ') ? 'error' : 'ok', flash) : ''}
<p>${health.ready ? html`<strong>Ready.</strong> This instance serves requests.` : html`<strong>Not ready.</strong> A load balancer using the health route takes this instance out.`} <span class="meta">Checked ${dateTime(health.checkedAt, context.timeZone)} on instance <code>${health.instanceId}</code>.</span></p>
${scrollingTable('Health checks', html`<table class="health"><thead><tr><th>Check</th><th>State</th><th>What was found</th></tr></thead><tbody>${health.checks.map(
    (check) => html`<tr data-check="${check.name}"><td>${check.name}</td><td>${statusBadge(check.status)}</td><td>${check.detail}</td></tr>`,
  )}</tbody></table>`)}
<h2>Jobs that failed for good</h2>
<p class="hint">Webhook deliveries, pushes, notifications and other follow-ups that ran out of retries (the newest ${failedJobs.length === 50 ? '50' : 'first'}). Retry runs one again with fresh retries; dismiss sets it aside.</p>
${failedJobs.length === 0 ? html`<p class="meta">No failed job.</p>` : scrollingTable('Failed jobs', html`<table class="failed-jobs"><thead><tr><th>Failed</th><th>Job</th><th>For</th><th>Attempts</th><th>Last error</th><th>Actions</th></tr></thead><tbody>${failedJobs.map(
    (job) => html`<tr data-job="${job.messageId}"><td class="meta">${dateTime(job.doneAt ?? job.createdAt, context.timeZone)}</td><td><code>${job.name}</code></td><td><code>${job.orderingKey}</code></td><td>${job.attempts}</td><td>${job.lastError ?? ''}</td><td>${jobActions(context, job.messageId)}</td></tr>`,
  )}</tbody></table>`)}
<h2>Provider calls that failed in the last day</h2>
${failedProviderCalls.length === 0 ? html`<p class="meta">None.</p>` : scrollingTable('Failed provider calls', html`<table class="failed-calls"><thead><tr><th>Time</th><th>Call</th><th>Status</th><th>What the provider said</th></tr></thead><tbody>${failedProviderCalls.map(
    (call) => html`<tr><td class="meta">${dateTime(call.createdAt, context.timeZone)}</td><td><code>${call.step}</code></td><td>${call.statusCode ?? '—'}</td><td>${call.error ?? ''}</td></tr>`,
  )}</tbody></table>`)}
<h2>Versions</h2>
<dl class="versions"><dt>fastify-shipments</dt><dd>${versions.package}</dd><dt>Node.js</dt><dd>${versions.node}</dd><dt>Database</dt><dd>${versions.database}</dd>
<dt>Migrations</dt><dd>${migrations.applied} of ${migrations.shipped.length} applied</dd></dl>
<details><summary>The package's migrations</summary><ol class="migrations">${migrations.shipped.map((tag, index) => html`<li>${tag}${index < migrations.applied ? '' : html` <span class="badge badge-error">not applied</span>`}</li>`)}</ol></details>`
}
