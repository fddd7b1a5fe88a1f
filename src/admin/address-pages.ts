// Verified addresses on the admin: the shipment page's address panel (the carrier's verdict, its
// corrections field by field, "Verify", "Accept the correction", "Ship as is") and the setting's section
// on the Shipping rules page (off, warn or block; the integration that verifies).
import type { AddressCheck } from '../addresses/service.js'
import type { SavedAddressVerificationSetting } from '../deliveries/address-checks.js'
import { html, isolated, type SafeHtml } from '../html.js'
import type { PostalAddress } from '../order-store.js'
import type { FastifyRequest } from 'fastify'
import { csrfField, dateTime, field, notice, scrollingTable, select, type FieldErrors, type PageContext } from './components.js'
import type { AdminRoutesOptions } from './screen.js'

const VERDICT_WORDS: Record<NonNullable<AddressCheck['verdict']>, { label: string; badge: string }> = {
  deliverable: { label: 'Deliverable', badge: 'badge-ok' },
  corrected: { label: 'Deliverable with corrections', badge: 'badge-warn' },
  undeliverable: { label: 'Undeliverable', badge: 'badge-error' },
  unverified: { label: 'Not verified', badge: 'badge-muted' },
}
const FIELD_WORDS: Record<string, string> = { street1: 'Street', street2: 'Street, line 2', city: 'City', state: 'State', postalCode: 'Postal code', country: 'Country' }
const MODE_WORDS = { off: 'Off: addresses are not verified', warn: 'Warn: rate and buy, and say when an address is in doubt', block: 'Block: refuse rates and labels for an undeliverable address' } as const

const addressLines = (address: PostalAddress) =>
  [address.name, address.company, address.street1, address.street2, [address.city, address.state, address.postalCode].filter(Boolean).join(' '), address.country].filter((line): line is string => Boolean(line))

const addressBlock = (address: PostalAddress | null) =>
  address ? html`<address>${addressLines(address).map((line, index) => html`${index > 0 ? html`<br>` : ''}${isolated(line)}`)}</address>` : html`<p class="meta">No address.</p>`

/** The shipment page's address panel; `problem` is a refusal of the last button pressed. */
export function addressPanel(context: PageContext, check: AddressCheck | null, problem: string | null = null): SafeHtml {
  const url = `${context.prefix}/shipments/${check?.shipmentId ?? 0}/address-check`
  const button = (action: string, label: string, primary = false) =>
    html`<form method="post" action="${action ? `${url}/${action}` : url}" class="inline">${csrfField(context.csrf)}<button type="submit"${primary ? html` class="primary"` : ''}>${label}</button></form> `
  if (!check) return html`<section id="ship-to" aria-labelledby="ship-to-title"><h2 id="ship-to-title">Ship-to address</h2><p class="field-error" role="alert">${problem ?? 'The ship-to check could not be read now.'}</p></section>`
  const verdict = check.verdict ? VERDICT_WORDS[check.verdict] : null
  const current = check.status === 'current'
  const changes = current && check.changes.length > 0
    ? scrollingTable(
        "The carrier's corrections",
        html`<table><caption>The carrier's corrections</caption><thead><tr><th scope="col">Field</th><th scope="col">On the order</th><th scope="col">The carrier's</th></tr></thead><tbody>${check.changes.map(
          (change) => html`<tr data-change="${change.field}"><th scope="row">${FIELD_WORDS[change.field] ?? change.field}</th><td><del>${isolated(change.from ?? '')}</del></td><td><ins>${isolated(change.to ?? '')}</ins></td></tr>`,
        )}</tbody></table>`,
      )
    : ''
  const status =
    check.status === 'unchecked'
      ? html`<p data-address-status>Not verified yet.</p>`
      : html`<p data-address-status>${verdict ? html`<span class="badge ${verdict.badge}">${verdict.label}</span> ` : ''}${check.checkedAt ? html`checked ${dateTime(check.checkedAt, context.timeZone)}` : ''}${check.status === 'stale' ? html` <strong>(the order's address changed since: verify it again)</strong>` : ''}</p>`
  const decision = current && check.decision === 'accepted' ? html`<p>The carrier's correction was accepted: rates, labels and the packing slip use it. The order keeps its own address.</p>`
    : current && check.decision === 'asIs' ? html`<p>Shipping to the address as it is (chosen knowingly).</p>` : ''
  const problems = check.problems.length > 0 ? html`<ul class="address-problems">${check.problems.map((each) => html`<li>${isolated(each.message)}${each.field ? html` <span class="meta">(${each.field})</span>` : ''}</li>`)}</ul>` : ''
  const can = context.can.edit
  const actions = can
    ? html`<p>${button('', 'Verify', check.status !== 'current')}${current && check.verdict === 'corrected' && check.decision !== 'accepted' ? button('accept', 'Accept the correction', true) : ''}${current && check.verdict && check.verdict !== 'deliverable' && check.decision !== 'asIs' ? button('as-is', 'Ship as is') : ''}</p>`
    : ''
  return html`<section id="ship-to" aria-labelledby="ship-to-title"><h2 id="ship-to-title">Ship-to address</h2>
${problem ? html`<p class="field-error" role="alert">${problem}</p>` : ''}
${check.warning && check.decision !== 'asIs' ? notice('error', check.warning) : ''}
${addressBlock(check.shipTo)}${check.ownShipTo ? html`<p class="meta">The shipment's own ship-to (the accepted correction).</p>` : ''}
${status}${problems}${changes}${decision}${actions}
${check.mode === 'off' ? html`<p class="meta">Address verification is off (<a href="${`${context.prefix}/shipping-rules#address-verification`}">the setting</a>).</p>` : ''}</section>`
}

/** The setting's section of the Shipping rules page. */
export function addressVerificationSection(context: PageContext, data: { setting: SavedAddressVerificationSetting; integrations: string[]; values?: Record<string, string>; errors?: FieldErrors }): SafeHtml {
  const errors = data.errors ?? {}
  const values = data.values ?? { addressMode: data.setting.mode, addressIntegration: data.setting.integration ?? '' }
  const integrations = [...new Set([...data.integrations, ...(values.addressIntegration ? [values.addressIntegration] : [])])]
  const form = html`<form method="post" action="${`${context.prefix}/address-verification`}" aria-label="Address verification" novalidate>${csrfField(context.csrf)}
<div class="field-row">
${field({ name: 'addressMode', label: 'Mode', errors }, (aria) => select('addressMode', values.addressMode ?? 'off', Object.entries(MODE_WORDS), aria))}
${field({ name: 'addressIntegration', label: 'Integration that verifies', errors }, (aria) => select('addressIntegration', values.addressIntegration ?? '', [['', 'None'], ...integrations.map((handle) => [handle, handle] as const)], aria))}
</div><button type="submit" class="primary">Save address verification</button></form>`
  return html`<h2 id="address-verification">Address verification</h2>
<p>Before rating, the carrier can say whether it delivers to a shipment's address and how it would write it. Warn lets everything through and says when an address is in doubt; block refuses rates and labels for an undeliverable address (verified once, first, when it was not yet) until a person corrects the order or chooses "Ship as is".</p>
${data.setting.savedAt ? html`<p class="meta">Last saved ${data.setting.savedAt}${data.setting.savedBy ? ` by user ${data.setting.savedBy}` : ''}.</p>` : ''}
${context.can.edit ? form : html`<p>${MODE_WORDS[data.setting.mode]}${data.setting.integration ? `, through ${data.setting.integration}` : ''}.</p>`}`
}

/** Enabled integrations that sell labels and verify addresses: what the setting may name. */
async function verifyingIntegrations(options: AdminRoutesOptions): Promise<string[]> {
  return (await options.integrations.list())
    .filter((integration) => options.integrations.isEnabled(integration) && options.providers.get(integration.providerId ?? '')?.deliveries?.verifyAddress)
    .map((integration) => integration.handle)
}

/** The shipment page's address panel; a check that cannot be read costs the panel, never the page. */
export async function addressPanelOf(options: AdminRoutesOptions, request: FastifyRequest, context: PageContext, id: number, problem: string | null = null) {
  try {
    return addressPanel(context, await options.addresses.check(id), problem)
  } catch (error) {
    request.log.error({ err: error, shipmentId: id }, 'The ship-to check for the shipment page could not be read')
    return addressPanel(context, null, problem)
  }
}

/** The setting's section of the Shipping rules page. */
export async function addressSettingSectionOf(options: AdminRoutesOptions, context: PageContext, state: { values?: Record<string, string>; errors?: FieldErrors } = {}) {
  const [setting, integrations] = await Promise.all([options.addresses.setting(), verifyingIntegrations(options)])
  return addressVerificationSection(context, { setting, integrations, ...state })
}
