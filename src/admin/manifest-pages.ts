// The manifests screen: per integration that sells labels, today's labels waiting for a manifest by carrier
// and ship-from, each carrier that wants one with its "Create manifest" button (one that needs none says
// so); then the manifests made, with their state, count and a link to print the form.
import type { EligibleLabels, Manifest } from '../manifests/service.js'
import { html, type SafeHtml } from '../html.js'
import { csrfField, dateTime, errorSummary, notice, scrollingTable, type PageContext } from './components.js'

export interface ManifestPageData {
  /** Today's eligible labels of each integration that sells labels (or why they could not be read). */
  eligible: Array<{ integration: string; labels: EligibleLabels | null; problem: string | null }>
  manifests: Manifest[]
  nextBeforeId: number | null
  /** A refused creation, in the provider's or the service's words. */
  problem: string | null
  flash: string | null
}

const STATE_LABELS: Record<Manifest['state'], string> = { pending: 'Pending', created: 'Created', failed: 'Failed' }
const stateBadge = (state: Manifest['state']) => html`<span class="badge ${state === 'failed' ? 'badge-attention' : 'badge-muted'}" data-state="${state}">${STATE_LABELS[state]}</span>`

function eligibleSection(context: PageContext, entry: ManifestPageData['eligible'][number]): SafeHtml {
  const url = `${context.prefix}/manifests`
  if (entry.problem) return html`<section aria-labelledby="${`eligible-${entry.integration}`}"><h3 id="${`eligible-${entry.integration}`}">${entry.integration}</h3><p>${entry.problem}</p></section>`
  const groups = entry.labels?.groups ?? []
  const rows = groups.map(
    (group) => html`<tr data-carrier="${group.carrier}"><td>${group.carrier}</td><td>${group.shipFrom || '—'}</td><td>${group.count}</td>
<td>${
      group.needsManifest
        ? html`<form method="post" action="${url}" aria-label="${`Create the ${group.carrier} manifest of ${entry.integration}`}">${csrfField(context.csrf)}<input type="hidden" name="integration" value="${entry.integration}"><input type="hidden" name="carrier" value="${group.carrier}"><input type="hidden" name="date" value="${entry.labels!.date}"><button type="submit" class="primary">Create manifest</button></form>`
        : html`<span data-needs-none>${group.reason ?? 'Needs no manifest.'}</span>`
    }</td></tr>`,
  )
  return html`<section aria-labelledby="${`eligible-${entry.integration}`}"><h3 id="${`eligible-${entry.integration}`}">${entry.integration}</h3>
${
  groups.length === 0
    ? html`<p class="meta">No labels bought today are waiting for a manifest.</p>`
    : scrollingTable(`Labels of ${entry.integration} waiting for a manifest`, html`<table><thead><tr><th>Carrier</th><th>Ship from</th><th>Labels</th><th>Manifest</th></tr></thead><tbody>${rows}</tbody></table>`)
}${entry.labels?.truncated ? html`<p class="meta">More labels are waiting than one manifest takes: the first ones are counted.</p>` : ''}</section>`
}

export function manifestPage(context: PageContext, data: ManifestPageData): SafeHtml {
  const url = `${context.prefix}/manifests`
  const rows = data.manifests.map(
    (manifest) => html`<tr data-manifest="${manifest.id}"><td>${manifest.id}</td><td>${manifest.integration}</td><td>${manifest.carrier}</td><td>${stateBadge(manifest.state)}${manifest.error ? html`<br><span class="meta">${manifest.error}</span>` : ''}</td>
<td>${manifest.parcelCount}</td><td>${dateTime(manifest.dateCreated, context.timeZone)}</td>
<td>${manifest.formAvailable ? html`<a href="${`${url}/${manifest.id}/form`}">Print form ${manifest.id}</a>` : '—'}</td></tr>`,
  )
  return html`<h1>Manifests</h1>${data.problem ? errorSummary([{ message: data.problem, target: null }]) : ''}${data.flash ? notice('ok', data.flash) : ''}
<h2>Waiting for today's manifest</h2>
${data.eligible.length === 0 ? html`<p class="meta">No enabled integration sells labels.</p>` : data.eligible.map((entry) => eligibleSection(context, entry))}
<h2>Manifests made</h2>
${
  data.manifests.length === 0
    ? html`<p class="meta">No manifests yet.</p>`
    : scrollingTable('Manifests', html`<table><thead><tr><th>Manifest</th><th>Integration</th><th>Carrier</th><th>State</th><th>Labels</th><th>Made</th><th>Form</th></tr></thead><tbody>${rows}</tbody></table>`)
}
${data.nextBeforeId !== null ? html`<p><a href="${`${url}?beforeId=${data.nextBeforeId}`}" rel="next">Older manifests</a></p>` : ''}`
}
