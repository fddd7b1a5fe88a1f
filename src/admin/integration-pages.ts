// The integration screens: the list, the form generated from the provider's settings schema with the
// status map editor, the outbound editor (outboundStatusMap and pushOn), enable/disable, the connection
// check, and the recent deliveries.
import type { TSchema } from '@sinclair/typebox'
import type { Integration } from '../gateway/integration.js'
import type { AnyProviderDefinition, ConnectionCheck } from '../gateway/providers.js'
import { SECRET_MASK } from '../gateway/integrations.js'
import { isShipmentStatus, SHIPMENT_STATUSES } from '../model/shipment.js'
import { environmentReference } from '../env.js'
import { html, type SafeHtml } from '../html.js'
import { csrfField, dateTime, errorSummary, field, fieldErrors, formErrors, notice, scrollingTable, select, STATUS_LABELS, statusBadge, summaryEntries, textInput, type FieldErrors } from './components.js'
import type { PageContext } from './shipment-pages.js'

/** A setting as the form presents it. */
interface SettingField {
  key: string
  kind: 'string' | 'number' | 'boolean' | 'enum'
  choices: string[]
  required: boolean
  secret: boolean
  /** The schema's `title`, or the key. */
  label: string
  description: string | null
}

/** The settings form of a provider: one field per property of its TypeBox object schema. */
export function settingFields(provider: AnyProviderDefinition): SettingField[] {
  const schema = provider.settingsSchema as { properties?: Record<string, TSchema>; required?: string[] }
  const secrets = new Set<string>(provider.secretSettings ?? [])
  return Object.entries(schema.properties ?? {}).map(([key, property]) => {
    const literals = (property.anyOf as TSchema[] | undefined)?.map((member) => member.const)
    const choices: string[] = Array.isArray(property.enum)
      ? property.enum.map(String)
      : literals && literals.every((value) => typeof value === 'string' || typeof value === 'number')
        ? literals.map(String)
        : []
    const kind: SettingField['kind'] =
      choices.length > 0 ? 'enum' : property.type === 'boolean' ? 'boolean' : property.type === 'number' || property.type === 'integer' ? 'number' : 'string'
    const title = typeof property.title === 'string' && property.title.trim() !== '' ? property.title : key
    const description = typeof property.description === 'string' && property.description.trim() !== '' ? property.description : null
    return { key, kind, choices, required: (schema.required ?? []).includes(key), secret: secrets.has(key), label: title, description }
  })
}

export interface IntegrationFormValues {
  name: string
  handle: string
  enabled: string
  settings: Record<string, string>
  statusMap: Array<[string, string]>
  /** Outbound: a shipment status to the integration's own code ('' = no code). */
  outboundStatusMap: Record<string, string>
  /** The shipment statuses whose reaching pushes the shipment to the integration. */
  pushOn: string[]
}

export function integrationFormValues(integration: Integration | null, provider: AnyProviderDefinition): IntegrationFormValues {
  const settings: Record<string, string> = {}
  for (const setting of settingFields(provider)) {
    const value = integration?.settings[setting.key]
    settings[setting.key] = value === undefined || value === null ? '' : String(value)
  }
  return {
    name: integration?.name ?? '',
    handle: integration?.handle ?? '',
    enabled: integration ? String(integration.enabled) : 'true',
    settings,
    // A new integration starts from the provider's default map, to edit before it is created.
    statusMap: Object.entries(integration ? integration.statusMap : (provider.defaultStatusMap ?? {})),
    outboundStatusMap: Object.fromEntries(SHIPMENT_STATUSES.map((status) => [status, integration?.outboundStatusMap[status] ?? ''])),
    pushOn: [...(integration?.pushOn ?? [])],
  }
}

const first = (value: unknown) => (typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '')
const all = (value: unknown) => (Array.isArray(value) ? value.map((item) => (typeof item === 'string' ? item : '')) : typeof value === 'string' ? [value] : [])

/** The integration a submitted form describes, in the service's input shape. */
export function readIntegrationForm(body: Record<string, unknown>, provider: AnyProviderDefinition) {
  const values: IntegrationFormValues = { name: first(body.name), handle: first(body.handle).trim(), enabled: first(body.enabled).trim(), settings: {}, statusMap: [], outboundStatusMap: {}, pushOn: [] }
  const settings: Record<string, unknown> = {}
  for (const setting of settingFields(provider)) {
    const text = first(body[`settings.${setting.key}`])
    values.settings[setting.key] = text
    const trimmed = text.trim()
    // Left blank: no value. Undefined (not left out) so that an update drops a value stored before.
    if (trimmed === '') {
      settings[setting.key] = undefined
      continue
    }
    if (environmentReference(trimmed) !== null || setting.kind === 'string' || setting.kind === 'enum') settings[setting.key] = setting.kind === 'string' ? text : trimmed
    else if (setting.kind === 'boolean') settings[setting.key] = trimmed === 'true' ? true : trimmed === 'false' ? false : trimmed
    // Not a number: kept as text, so the provider's schema names the setting in its message.
    else settings[setting.key] = /^-?\d+(\.\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed
  }
  const codes = all(body['statusMap.code'])
  const statuses = all(body['statusMap.status'])
  // No prototype: a row whose code is `__proto__` is a key like any other, not an assignment of the prototype.
  const statusMap: Record<string, string> = Object.create(null)
  codes.forEach((code, index) => {
    const status = statuses[index] ?? ''
    if (code.trim() === '' && status === '') return
    values.statusMap.push([code, status])
    statusMap[code.trim()] = status
  })
  // One input per shipment status; left blank: no code for that status.
  const outboundStatusMap: Record<string, string> = {}
  for (const status of SHIPMENT_STATUSES) {
    const code = first(body[`outboundStatusMap.${status}`])
    values.outboundStatusMap[status] = code
    if (code.trim() !== '') outboundStatusMap[status] = code.trim()
  }
  // Checked boxes only; an unknown value is passed on, so the service names it in its refusal.
  const pushOn = [...new Set(all(body.pushOn).filter((status) => status !== ''))]
  values.pushOn = pushOn
  const enabled = values.enabled === 'true' ? true : values.enabled === 'false' ? false : values.enabled
  return { values, input: { name: values.name, handle: values.handle, enabled, settings, statusMap, outboundStatusMap, pushOn } }
}

/** The service's problems (IntegrationConfigError's `fields`) as the form's errors, each beside its field. */
export function integrationErrors(fields: Readonly<Record<string, readonly string[]>>): FieldErrors {
  const errors: FieldErrors = {}
  const put = (key: string, message: string) => void (errors[key] ??= []).push(message)
  for (const [key, messages] of Object.entries(fields)) {
    for (const message of messages) {
      if (key.startsWith('statusMap')) put('statusMap', `${key}: ${message}`)
      // "outboundStatusMap.shipped: ..." sits beside that status's input; "outboundStatusMap: ..." above the table.
      else if (key.startsWith('outboundStatusMap.') && !isShipmentStatus(key.slice('outboundStatusMap.'.length))) put('outboundStatusMap', `${key}: ${message}`)
      else put(key === 'settings' || key === 'integration' ? 'form' : key, message)
    }
  }
  return errors
}

export function integrationListPage(context: PageContext, integrations: Integration[], providers: AnyProviderDefinition[], isEnabled: (integration: Integration) => boolean): SafeHtml {
  return html`<h1>Integrations</h1>
${scrollingTable('Integrations', html`<table class="integrations"><thead><tr><th>Name</th><th>Handle</th><th>Provider</th><th>Enabled</th><th>Updated</th></tr></thead><tbody>${integrations.map(
    (integration) => html`<tr data-integration="${integration.handle}"><td><a href="${context.prefix}/integrations/${integration.handle}">${integration.name}</a></td>
<td><code>${integration.handle}</code></td><td>${integration.providerId ?? '—'}</td>
<td>${enabledBadge(integration, isEnabled(integration))}</td><td class="meta">${dateTime(integration.dateUpdated, context.timeZone)}</td></tr>`,
  )}</tbody></table>`)}
${integrations.length === 0 ? html`<p>No integrations yet.</p>` : ''}
<h2>New integration</h2>
<form method="get" action="${context.prefix}/integrations/new" class="toolbar">
<div><label for="input-provider">Provider</label>${select('provider', '', providers.map((provider) => [provider.id, provider.name ?? provider.id] as const))}</div>
<button type="submit">Continue</button></form>`
}

function enabledBadge(integration: Integration, on: boolean): SafeHtml {
  const reference = typeof integration.enabled === 'string' ? integration.enabled : null
  return html`<span class="badge ${on ? 'badge-ok' : 'badge-muted'}">${on ? 'Enabled' : 'Disabled'}</span>${reference ? html` <span class="meta">from <code>${reference}</code></span>` : ''}`
}

export interface IntegrationPageData {
  integration: Integration | null
  provider: AnyProviderDefinition
  values: IntegrationFormValues
  errors: FieldErrors
  flash: string | null
  check: ConnectionCheck | null
  deliveries: Array<{ deliveryId: string; date: string; outcome: string; reason: string | null }>
  enabled: boolean
  /** The gateway URL the sending service posts to (an existing integration only). */
  gatewayUrl: string | null
}

export function integrationPage(context: PageContext, data: IntegrationPageData): SafeHtml {
  const { integration, provider, values, errors } = data
  const action = integration ? `${context.prefix}/integrations/${integration.handle}` : `${context.prefix}/integrations`
  const settings = settingFields(provider)
  const knownFields = new Set([
    'name',
    'handle',
    'enabled',
    'statusMap',
    'outboundStatusMap',
    'pushOn',
    ...SHIPMENT_STATUSES.map((status) => `outboundStatusMap.${status}`),
    ...settings.map((setting) => `settings.${setting.key}`),
  ])
  // The tables' messages link to their tables (the summary's script focuses their first control).
  const targets = { statusMap: 'status-map', outboundStatusMap: 'outbound-status-map', pushOn: `input-pushOn-${SHIPMENT_STATUSES[0]}` }
  return html`${errorSummary(summaryEntries(errors, knownFields, targets))}<h1>${integration ? html`Integration ${integration.name}` : html`New ${provider.name ?? provider.id} integration`}</h1>
${data.flash ? notice('ok', data.flash) : ''}
${data.check ? notice(data.check.ok ? 'ok' : 'error', html`<strong>Connection check: ${data.check.ok ? 'OK' : 'failed'}.</strong> ${data.check.message ?? ''}`) : ''}
${integration ? html`<div class="toolbar">
<form method="post" action="${action}/${data.enabled ? 'disable' : 'enable'}"${data.enabled ? html` data-confirm="Disable this integration? Its gateway requests will be refused."` : ''}>${csrfField(context.csrf)}<button type="submit">${data.enabled ? 'Disable' : 'Enable'}</button></form>
<form method="post" action="${action}/check">${csrfField(context.csrf)}<button type="submit">Check connection</button></form>
</div>` : ''}
${data.gatewayUrl ? gatewayUrlSection(data.gatewayUrl) : ''}
<form method="post" action="${action}" novalidate aria-label="Integration">
${csrfField(context.csrf)}
${integration ? '' : html`<input type="hidden" name="providerId" value="${provider.id}">`}
${formErrors(errors, knownFields)}
${field({ name: 'name', label: 'Name', errors }, (aria) => textInput('name', values.name, aria))}
${field({ name: 'handle', label: 'Handle', errors, hint: 'Lowercase letters, digits, "-" and "_"; the gateway URL names it.' }, (aria) => textInput('handle', values.handle, aria))}
${field({ name: 'enabled', label: 'Enabled', errors, hint: 'Or an environment reference such as $WEBHOOKS_ENABLED.' }, (aria) =>
    environmentReference(values.enabled) !== null
      ? textInput('enabled', values.enabled, aria)
      : select('enabled', values.enabled, [['true', 'Yes'], ['false', 'No']], aria),
  )}
<h2>Settings</h2>
${settings.length === 0 ? html`<p class="meta">This provider has no settings.</p>` : ''}
${settings.map((setting) => settingField(setting, values.settings[setting.key] ?? '', errors))}
<h2>Status map</h2>
<p class="hint">The provider's status codes and the shipment status each one moves a shipment to.</p>
${errors.statusMap ? html`${errors.statusMap.map((message) => html`<p class="field-error" role="alert">${message}</p>`)}` : ''}
${scrollingTable('Status map', html`<table id="status-map" class="status-map"><thead><tr><th>External code</th><th>Shipment status</th></tr></thead>
<tbody>${[...values.statusMap, ['', ''] as [string, string]].map(([code, status]) => statusMapRow(code, status))}</tbody>
<template>${statusMapRow('', '')}</template></table>`)}
<p><button type="button" data-add-row="status-map">Add a row</button></p>
${outboundEditor(provider, values, errors)}
<button type="submit" class="primary">${integration ? 'Save' : 'Create'}</button>
</form>
${integration ? deliveriesTable(data.deliveries, context.timeZone) : ''}`
}

/** The outbound direction: the code sent for each shipment status, and the statuses that push. */
function outboundEditor(provider: AnyProviderDefinition, values: IntegrationFormValues, errors: FieldErrors): SafeHtml {
  const pushes = Boolean(provider.pushShipment)
  const cancels = Boolean(provider.cancelShipment)
  return html`<h2>Outbound</h2>
<p class="hint">The code sent to the integration for each shipment status when a shipment is pushed (left blank: no code), and the statuses whose reaching pushes the shipment there (Cancelled: cancels it there).
${pushes || cancels ? '' : html` This provider can neither push nor cancel shipments.`}</p>
${errors.outboundStatusMap ? html`${errors.outboundStatusMap.map((message) => html`<p class="field-error" role="alert">${message}</p>`)}` : ''}
${scrollingTable('Outbound status map', html`<table id="outbound-status-map" class="status-map"><thead><tr><th>Shipment status</th><th>Integration's code</th><th>Push on reaching</th></tr></thead>
<tbody>${SHIPMENT_STATUSES.map((status) => {
    const name = `outboundStatusMap.${status}`
    const failed = (errors[name] ?? []).length > 0
    const aria = failed ? html` aria-invalid="true" aria-describedby="${`error-${name}`}"` : html``
    const checked = values.pushOn.includes(status)
    return html`<tr data-field="${name}"${failed ? html` class="has-error"` : ''}><td><label for="${`input-${name}`}">${STATUS_LABELS[status]}</label></td>
<td><input type="text" id="${`input-${name}`}" name="${name}" value="${values.outboundStatusMap[status] ?? ''}"${aria}>${fieldErrors(errors, name)}</td>
<td><input type="checkbox" id="${`input-pushOn-${status}`}" name="pushOn" value="${status}" aria-label="${`Push on reaching ${STATUS_LABELS[status]}`}"${checked ? html` checked` : ''}></td></tr>`
  })}</tbody></table>`)}
<div class="field${errors.pushOn ? ' has-error' : ''}" data-field="pushOn">${fieldErrors(errors, 'pushOn')}</div>`
}

function statusMapRow(code: string, status: string): SafeHtml {
  return html`<tr><td><input type="text" name="statusMap.code" value="${code}" aria-label="External code"></td>
<td><select name="statusMap.status" aria-label="Shipment status"><option value="">—</option>${SHIPMENT_STATUSES.map(
    (choice) => html`<option value="${choice}"${choice === status ? html` selected` : ''}>${STATUS_LABELS[choice]}</option>`,
  )}</select></td></tr>`
}

function settingField(setting: SettingField, value: string, errors: FieldErrors): SafeHtml {
  const name = `settings.${setting.key}`
  const reference = environmentReference(value)
  const hints: Array<SafeHtml | string> = []
  if (setting.description) hints.push(setting.description)
  if (reference) hints.push(html` Read from the environment variable <code>${reference}</code>.`)
  else if (setting.secret) hints.push(html` Secret: ${value === SECRET_MASK ? 'leave the mask to keep the stored value; ' : ''}or use an environment reference such as <code>$MY_SECRET</code>.`)
  const label = `${setting.label}${setting.required ? '' : ' (optional)'}`
  return field({ name, label, errors, hint: html`${hints}` }, (aria) => {
    if (reference === null && setting.kind === 'boolean') return select(name, value, [['', '—'], ['true', 'Yes'], ['false', 'No']], aria)
    if (reference === null && setting.kind === 'enum') return select(name, value, [['', '—'], ...setting.choices.map((choice) => [choice, choice] as const)], aria)
    return textInput(name, value, aria, setting.secret && reference === null ? 'password' : 'text')
  })
}

/** The URL to paste into the sending service, selectable, with a copy button (admin.js shows it; CSP: no inline script). */
function gatewayUrlSection(url: string): SafeHtml {
  return html`<section class="gateway-url" aria-labelledby="gateway-url-heading"><h2 id="gateway-url-heading">Gateway URL</h2>
<p class="hint">Paste this URL into the sending service as its webhook (callback) URL.</p>
<div class="copy-row"><input type="text" id="gateway-url" value="${url}" readonly aria-labelledby="gateway-url-heading" data-select-on-focus>
<button type="button" data-copy-from="gateway-url" hidden>Copy</button><span class="copy-status meta" role="status" aria-live="polite"></span></div></section>`
}

function deliveriesTable(deliveries: IntegrationPageData['deliveries'], timeZone: string): SafeHtml {
  return html`<h2>Recent deliveries</h2>
${deliveries.length === 0 ? html`<p class="meta">No deliveries recorded yet.</p>` : scrollingTable('Recent deliveries', html`<table class="deliveries"><thead><tr><th>Time</th><th>Delivery id</th><th>Outcome</th><th>Reason</th></tr></thead><tbody>${deliveries.map(
    (delivery) => html`<tr><td class="meta">${dateTime(delivery.date, timeZone)}</td><td><code>${delivery.deliveryId}</code></td><td>${outcomeBadge(delivery.outcome)}</td><td>${delivery.reason ?? ''}</td></tr>`,
  )}</tbody></table>`)}`
}

const outcomeBadge = (outcome: string) =>
  html`<span class="badge ${outcome === 'applied' ? 'badge-ok' : outcome === 'rejected' ? 'badge-error' : 'badge-muted'}">${outcome}</span>`

export { statusBadge }
