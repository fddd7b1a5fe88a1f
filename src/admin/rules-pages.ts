// The shipping rules screen: the ordered rules (move up and down, enable, disable, delete), a rule's form
// (add, edit) with each problem beside its field, the default; and the shipment page's "Which rule and
// why" panel (the dry run, rated on request).
import type { Box } from '../deliveries/boxes.js'
import type { ShipmentExplanation } from '../rules/explain.js'
import { choiceWords } from '../rules/explain.js'
import type { ShippingRuleConditions, ShippingRuleDefault, ShippingRule } from '../rules/model.js'
import type { SavedShippingRules } from '../rules/service.js'
import { WEIGHT_UNITS } from '../model/units.js'
import { html, isolated, type SafeHtml } from '../html.js'
import { csrfField, errorSummary, field, formErrors, notice, scrollingTable, select, summaryEntries, textInput, type FieldErrors, type PageContext } from './components.js'

/** The rule form's fields with their labels, as the error summary names them. */
export const RULE_FIELDS = new Map([
  ['name', 'Name'],
  ['integration', 'Integration'],
  ['countries', 'Countries'],
  ['weightMin', 'Weight from'],
  ['weightMax', 'Weight below'],
  ['weightUnit', 'Weight unit'],
  ['parcelMin', 'Parcels from'],
  ['parcelMax', 'Parcels up to'],
  ['attributeName', 'Order attribute'],
  ['attributeValues', 'Attribute values'],
  ['choiceKind', 'Choice'],
  ['days', 'Days'],
  ['carrier', 'Carrier'],
  ['service', 'Service'],
  ['boxId', 'Box'],
])
/** The default's form fields: the rule form's, prefixed. */
export const DEFAULT_FIELDS = new Map([
  ['defaultIntegration', 'Default integration'],
  ['defaultChoiceKind', 'Default choice'],
  ['defaultDays', 'Default days'],
  ['defaultCarrier', 'Default carrier'],
  ['defaultService', 'Default service'],
  ['defaultBoxId', 'Default box'],
])

const CHOICES = [
  ['cheapest', 'Cheapest'],
  ['cheapestWithin', 'Cheapest arriving within N days'],
  ['fastest', 'Fastest'],
  ['service', 'A named carrier and service'],
] as const

/** A rule's conditions in a line of words. */
export function conditionsWords(conditions: ShippingRuleConditions): string {
  const parts: string[] = []
  if (conditions.countries?.length) parts.push(`to ${conditions.countries.join(', ')}`)
  const weight = conditions.weight
  if (weight) parts.push(`weighing ${weight.min ?? '0'}${weight.max !== undefined ? ` to below ${weight.max}` : ' or more'} ${weight.unit}`)
  const count = conditions.parcelCount
  if (count) parts.push(`${count.max === undefined ? `${count.min} or more` : `${count.min ?? 1} to ${count.max}`} parcels`)
  const attribute = conditions.orderAttribute
  if (attribute) parts.push(`order ${attribute.name} is ${attribute.values.map((value) => `"${value}"`).join(' or ')}`)
  return parts.length > 0 ? parts.join('; ') : 'every parcel'
}

export interface RulesListData {
  saved: SavedShippingRules
  labelIntegrations: string[]
  boxes: Box[]
  /** The default form's values (as stored, or as sent when refused). */
  defaultValues: Record<string, string>
  errors: FieldErrors
  flash: string | null
}

const boxChoices = (boxes: Box[]) => [['', 'None'] as const, ...boxes.map((box) => [String(box.id), box.name] as const)]
const integrationChoices = (handles: string[], current: string, none?: string) => {
  const choices: Array<readonly [string, string]> = handles.map((handle) => [handle, handle] as const)
  // A stored handle no longer offered (disabled, removed) stays selectable, so the form shows what is saved.
  if (current !== '' && !handles.includes(current)) choices.unshift([current, `${current} (unavailable)`])
  return none === undefined ? choices : [['', none] as const, ...choices]
}

/** The message beside a field: the service's, without the rule's name and field it starts with. */
export const besideField = (message: string) => message.replace(/^(?:Rule \d+(?: "[^"]*")?|The default), [\w.]+: /, '')

function choiceFields(prefix: '' | 'default', values: Record<string, string>, errors: FieldErrors): SafeHtml {
  const name = (base: string) => (prefix ? `${prefix}${base[0]!.toUpperCase()}${base.slice(1)}` : base)
  const kind = name('choiceKind')
  return html`<div class="field-row">
${field({ name: kind, label: 'Choice', errors }, (aria) => select(kind, values[kind] ?? 'cheapest', CHOICES, aria))}
${field({ name: name('days'), label: 'Days (cheapest within)', errors }, (aria) => textInput(name('days'), values[name('days')] ?? '', html`${aria} inputmode="numeric" size="4"`))}
${field({ name: name('carrier'), label: 'Carrier (named service)', errors }, (aria) => textInput(name('carrier'), values[name('carrier')] ?? '', aria))}
${field({ name: name('service'), label: 'Service (named service)', errors, hint: 'As the provider names them, such as USPS and Priority.' }, (aria) => textInput(name('service'), values[name('service')] ?? '', aria))}
</div>`
}

export function rulesListPage(context: PageContext, data: RulesListData): SafeHtml {
  const base = `${context.prefix}/shipping-rules`
  const { rules, fallback } = data.saved
  const edit = context.can.edit
  const rows = rules.map((rule, index) => {
    const nameId = `rule-name-${rule.id}`
    const post = (action: string, label: string, options: { danger?: boolean; confirm?: string; disabled?: boolean } = {}) =>
      html`<form method="post" action="${`${base}/rule/${rule.id}/${action}`}" class="inline"${options.confirm ? html` data-confirm="${options.confirm}"` : ''}>${csrfField(context.csrf)}<button type="submit" aria-describedby="${nameId}"${options.danger ? html` class="danger"` : ''}${options.disabled ? html` disabled` : ''}>${label}</button></form> `
    return html`<tr data-rule="${rule.id}"><td>${index + 1}</td><td id="${nameId}"><a href="${`${base}/rule/${rule.id}`}">${isolated(rule.name)}</a></td>
<td>${rule.enabled ? html`<span class="badge badge-ok">Enabled</span>` : html`<span class="badge badge-muted">Disabled</span>`}</td>
<td>${conditionsWords(rule.conditions)}</td><td>${choiceWords(rule.choice, rule.integration)}${rule.boxId ? html`<div class="meta">Box ${boxName(data.boxes, rule.boxId)}</div>` : ''}</td>
${edit ? html`<td>${post('up', 'Move up', { disabled: index === 0 })}${post('down', 'Move down', { disabled: index === rules.length - 1 })}${post(rule.enabled ? 'disable' : 'enable', rule.enabled ? 'Disable' : 'Enable')}${post('delete', 'Delete', { danger: true, confirm: `Delete the rule "${rule.name}"?` })}</td>` : ''}</tr>`
  })
  const problems = summaryEntries(data.errors, new Set(DEFAULT_FIELDS.keys()), {}, Object.fromEntries(DEFAULT_FIELDS))
  return html`${errorSummary(problems)}<h1>Shipping rules</h1>${data.flash ? notice('ok', data.flash) : ''}
<p>The first enabled rule whose conditions all hold chooses how a parcel ships; when none does, the default applies. A shipment's page says which rule and why before anything is bought.</p>
${data.saved.savedAt ? html`<p class="meta">Last saved ${data.saved.savedAt}${data.saved.savedBy ? ` by user ${data.saved.savedBy}` : ''}.</p>` : ''}
${formErrors(data.errors, new Set(DEFAULT_FIELDS.keys()))}
${rules.length === 0 ? html`<p class="meta">No rules yet.</p>` : scrollingTable('Shipping rules', html`<table><thead><tr><th>#</th><th>Name</th><th>State</th><th>Conditions</th><th>Choice</th>${edit ? html`<th>Actions</th>` : ''}</tr></thead><tbody>${rows}</tbody></table>`)}
${edit ? html`<p><a class="button" href="${`${base}/new`}">Add a rule</a></p>` : ''}
<h2 id="default">Default</h2>
<p>${fallback ? `When no rule matches: ${choiceWords(fallback.choice, fallback.integration)}.` : 'When no rule matches, nothing is bought (the parcel is left for a person).'}</p>
${edit ? defaultForm(context, base, data) : ''}`
}

const boxName = (boxes: Box[], id: number) => boxes.find((box) => box.id === id)?.name ?? `#${id}`

function defaultForm(context: PageContext, base: string, data: RulesListData): SafeHtml {
  const { errors, defaultValues: values } = data
  return html`<form method="post" action="${`${base}/default`}" aria-label="The default" id="default-form" novalidate>${csrfField(context.csrf)}
<div class="field-row">
${field({ name: 'defaultIntegration', label: 'Integration', errors }, (aria) => select('defaultIntegration', values.defaultIntegration ?? '', integrationChoices(data.labelIntegrations, values.defaultIntegration ?? '', 'None: buy nothing'), aria))}
${field({ name: 'defaultBoxId', label: 'Box', errors }, (aria) => select('defaultBoxId', values.defaultBoxId ?? '', boxChoices(data.boxes), aria))}
</div>
${choiceFields('default', values, errors)}
<button type="submit" class="primary">Save the default</button></form>`
}

/** The default's form values. */
export function defaultValues(fallback: ShippingRuleDefault | null): Record<string, string> {
  if (!fallback) return { defaultIntegration: '', defaultChoiceKind: 'cheapest' }
  const choice = fallback.choice
  return {
    defaultIntegration: fallback.integration,
    defaultChoiceKind: choice.kind,
    defaultDays: choice.kind === 'cheapestWithin' ? String(choice.days) : '',
    defaultCarrier: choice.kind === 'service' ? choice.carrier : '',
    defaultService: choice.kind === 'service' ? choice.service : '',
    defaultBoxId: fallback.boxId ? String(fallback.boxId) : '',
  }
}

/** A rule's form values. */
export function ruleValues(rule: ShippingRule | null): Record<string, string> {
  if (!rule) return { enabled: 'true', choiceKind: 'cheapest', weightUnit: 'kg' }
  const { conditions: when, choice } = rule
  return {
    name: rule.name,
    enabled: String(rule.enabled),
    integration: rule.integration,
    countries: (when.countries ?? []).join(', '),
    weightMin: when.weight?.min ?? '',
    weightMax: when.weight?.max ?? '',
    weightUnit: when.weight?.unit ?? 'kg',
    parcelMin: when.parcelCount?.min !== undefined ? String(when.parcelCount.min) : '',
    parcelMax: when.parcelCount?.max !== undefined ? String(when.parcelCount.max) : '',
    attributeName: when.orderAttribute?.name ?? '',
    attributeValues: (when.orderAttribute?.values ?? []).join(', '),
    choiceKind: choice.kind,
    days: choice.kind === 'cheapestWithin' ? String(choice.days) : '',
    carrier: choice.kind === 'service' ? choice.carrier : '',
    service: choice.kind === 'service' ? choice.service : '',
    boxId: rule.boxId ? String(rule.boxId) : '',
  }
}

export interface RuleFormData {
  /** The rule's id when editing; null for a new rule. */
  ruleId: string | null
  /** Its place in the list (from 1), or null for a new one (added last). */
  position: number | null
  values: Record<string, string>
  errors: FieldErrors
  labelIntegrations: string[]
  boxes: Box[]
}

export function ruleFormPage(context: PageContext, data: RuleFormData): SafeHtml {
  const { values, errors } = data
  const base = `${context.prefix}/shipping-rules`
  const action = data.ruleId ? `${base}/rule/${data.ruleId}` : `${base}/new`
  const title = data.ruleId ? `Rule ${data.position}: ${values.name ?? ''}` : 'New shipping rule'
  const names = new Set(RULE_FIELDS.keys())
  const text = (name: string, label: string, hint?: string, attributes = html``) =>
    field({ name, label, errors, ...(hint !== undefined && { hint }) }, (aria) => textInput(name, values[name] ?? '', html`${aria}${attributes}`))
  return html`${errorSummary(summaryEntries(errors, names, {}, Object.fromEntries(RULE_FIELDS)))}<h1>${title}</h1>
<p><a href="${base}">Back to the shipping rules</a></p>
<form method="post" action="${action}" aria-label="Shipping rule" novalidate>${csrfField(context.csrf)}
${formErrors(errors, names)}
${text('name', 'Name')}
<div class="field" data-field="enabled"><label class="checkbox"><input type="checkbox" name="enabled" value="true"${values.enabled === 'true' ? html` checked` : ''}> Enabled</label></div>
${field({ name: 'integration', label: 'Integration (rates and buys)', errors }, (aria) => select('integration', values.integration ?? '', integrationChoices(data.labelIntegrations, values.integration ?? ''), aria))}
<fieldset><legend>Conditions (every one given must hold; leave one empty for any)</legend>
${text('countries', 'Destination countries', 'Two-letter codes (ISO 3166-1), separated by commas, such as US, CA.')}
<div class="field-row">
${text('weightMin', 'Weight from', 'At least this.', html` inputmode="decimal"`)}
${text('weightMax', 'Weight below', 'Less than this.', html` inputmode="decimal"`)}
${field({ name: 'weightUnit', label: 'Weight unit', errors }, (aria) => select('weightUnit', values.weightUnit ?? 'kg', WEIGHT_UNITS.map((unit) => [unit, unit] as const), aria))}
</div>
<div class="field-row">
${text('parcelMin', 'Parcels from', "The shipment's parcel count, at least.", html` inputmode="numeric"`)}
${text('parcelMax', 'Parcels up to', 'At most.', html` inputmode="numeric"`)}
</div>
<div class="field-row">
${text('attributeName', 'Order attribute', 'Such as shippingMethod (the shipping method the customer paid for).')}
${text('attributeValues', 'Attribute values', 'Any of these, separated by commas.')}
</div></fieldset>
<fieldset><legend>Choice</legend>
${choiceFields('', values, errors)}
${field({ name: 'boxId', label: 'Box to pack in first (suggested parcels)', errors }, (aria) => select('boxId', values.boxId ?? '', boxChoices(data.boxes), aria))}
</fieldset>
<button type="submit" class="primary">${data.ruleId ? 'Save the rule' : 'Add the rule'}</button></form>`
}

/** The shipment page's dry run: which rule and why for each parcel; `rate` asks the carrier (nothing is bought). */
export function rulesPanel(context: PageContext, shipmentId: number, explanation: ShipmentExplanation | null, error: string | null = null): SafeHtml {
  const parcels = explanation?.parcels ?? []
  return html`<section id="shipping-rules" aria-labelledby="shipping-rules-title"><h2 id="shipping-rules-title">Which rule and why</h2>
${error ? html`<p class="field-error" role="alert">${error}</p>` : ''}
${explanation && parcels.length === 0 ? html`<p class="meta">No parcels yet: add parcels to see which rule would choose.</p>` : ''}
${parcels.map(
    (parcel) => html`<div data-rule-parcel="${parcel.parcelId}"><h3>Parcel ${parcel.parcelId}</h3>
<p data-summary>${parcel.summary}</p><p class="meta">${parcel.factsText}</p>
${parcel.tried.length > 0 ? html`<details><summary>Rules tried (${parcel.tried.length})</summary><ol>${parcel.tried.map((rule) => html`<li value="${rule.position}"><strong>${isolated(rule.name)}</strong>: ${rule.why}</li>`)}</ol></details>` : ''}</div>`,
  )}
${context.can.edit && parcels.length > 0 ? html`<form method="post" action="${`${context.prefix}/shipments/${shipmentId}/shipping-rules/rate`}" class="inline">${csrfField(context.csrf)}<button type="submit">Rate by the rules (nothing is bought)</button></form> ` : ''}<a href="${`${context.prefix}/shipping-rules`}">The shipping rules</a></section>`
}
