// The parcels section of the shipment page: parcels with their labels, add a parcel, suggest parcels
// from the box catalogue, get rates, buy, print and void labels; the carrier's errors beside the form.
import type { Parcel } from '../model/parcel.js'
import type { RateQuote } from '../deliveries/service.js'
import { DIMENSION_UNITS, WEIGHT_UNITS } from '../model/units.js'
import type { Box, ParcelSuggestion } from '../deliveries/boxes.js'
import { csrfField, errorSummary, field, formErrors, scrollingTable, select, summaryEntries, textInput, type FieldErrors, type PageContext, type PageSection, type SummaryEntry } from './components.js'
import { html, isolated, safeHref, type SafeHtml } from '../html.js'

export interface ParcelSectionData {
  shipmentId: number
  parcels: Parcel[]
  /** Handles of enabled integrations whose provider sells labels. */
  labelIntegrations: string[]
  /** Quotes just fetched for one parcel, cheapest first. */
  quotes: { parcelId: number; quotes: RateQuote[] } | null
  /** Parcels just suggested from the boxes: shown with a form that accepts them as they are. */
  suggestion: ParcelSuggestion | null
  /** Errors of the parcel forms: `parcel.<field>` for the add form, `label.<parcelId>` for a parcel's label forms. */
  errors: FieldErrors
  values: Record<string, string>
}

const weightText = (parcel: Parcel) => `${parcel.weight.value} ${parcel.weight.unit}`
const sizeText = (parcel: Parcel) => (parcel.dimensions ? `${parcel.dimensions.length} × ${parcel.dimensions.width} × ${parcel.dimensions.height} ${parcel.dimensions.unit}` : '—')

/** The fields of a parcel's change form, with their labels as the summary names them. */
const PARCEL_FIELDS = new Map([
  ['weight', 'weight'],
  ['weightUnit', 'weight unit'],
  ['length', 'length'],
  ['width', 'width'],
  ['height', 'height'],
  ['dimensionUnit', 'size unit'],
])

/**
 * The parcel forms' problems for the shipment page's error summary: a field's message links to its
 * input, a parcel's label refusal to its row (its rates form first), a form's own refusal to that form;
 * a parcel no longer on the page is named without a link.
 */
function parcelProblems(context: PageContext, data: ParcelSectionData, canBuy: boolean): SummaryEntry[] {
  const targets: Record<string, string> = {}
  const labels: Record<string, string> = {}
  const parcels = new Map(data.parcels.map((parcel) => [String(parcel.id), parcel]))
  for (const name of Object.keys(data.errors)) {
    const [group, id, key] = name.split('.')
    if (group === 'parcel') {
      labels[name] = id === 'weight' ? 'New parcel, weight' : id === 'weightUnit' ? 'New parcel, weight unit' : 'Parcels'
      if (context.can.edit) targets[name] = id === 'weight' || id === 'weightUnit' ? `input-${name}` : 'add-parcel'
      continue
    }
    const parcel = parcels.get(id ?? '')
    if (group === 'label') {
      labels[name] = `Parcel ${id}, label`
      if (parcel && (canBuy || parcel.label)) targets[name] = `parcel-${id}`
    } else if (group === 'edit') {
      labels[name] = `Parcel ${id}${key && PARCEL_FIELDS.has(key) ? `, ${PARCEL_FIELDS.get(key)}` : ''}`
      const changeable = parcel && !parcel.label && context.can.edit
      if (changeable) targets[name] = key && PARCEL_FIELDS.has(key) ? `input-${name}` : `change-parcel-${id}`
      else if (parcel) targets[name] = `parcel-${id}`
    }
  }
  return summaryEntries(data.errors, new Set(), targets, labels)
}

/** The parcels section and its problems: the shipment page lists them in its error summary. */
export function parcelsSection(context: PageContext, data: ParcelSectionData): PageSection {
  const base = `${context.prefix}/shipments/${data.shipmentId}/parcels`
  const integrationChoices = data.labelIntegrations.map((handle) => [handle, handle] as const)
  const canBuy = context.can.buyLabels && data.labelIntegrations.length > 0
  const rows = data.parcels.map((parcel) => {
    const labelHref = parcel.label ? safeHref(parcel.label.url) : null
    const errorName = `label.${parcel.id}`
    const quotes = data.quotes?.parcelId === parcel.id ? data.quotes.quotes : null
    return html`<tr data-parcel="${parcel.id}" id="${`parcel-${parcel.id}`}">
<td>${weightText(parcel)}</td><td>${sizeText(parcel)}</td>
<td>${parcel.trackingNumber ? html`${isolated(parcel.carrier)} ${isolated(parcel.service)}<br>${isolated(parcel.trackingNumber)}` : '—'}</td>
<td>${parcel.label ? html`${labelHref ? html`<a href="${labelHref}" rel="noopener noreferrer" target="_blank">${parcel.label.format}</a>` : parcel.label.format}${parcel.label.cost ? html` · ${parcel.label.cost.amount} ${parcel.label.cost.currency}` : ''}` : '—'}
${(data.errors[errorName] ?? []).length > 0 ? html`<p class="field-error" role="alert" id="${`error-${errorName}`}">${data.errors[errorName]!.join(' ')}</p>` : ''}
${parcel.label && canBuy ? html`<form method="post" action="${base}/${parcel.id}/void" data-confirm="Void this label? The carrier decides on the refund.">${csrfField(context.csrf)}<button type="submit" class="danger">Void label</button></form>` : ''}
${!parcel.label && canBuy ? labelForms(context, base, parcel, integrationChoices, quotes, (data.errors[errorName] ?? []).length > 0) : ''}
${!parcel.label && context.can.edit ? changeParcelForm(context, base, parcel, data) : ''}</td>
</tr>`
  })
  const content = html`<h2 id="parcels" tabindex="-1">Parcels</h2>
${data.parcels.length === 0 ? html`<p class="meta">No parcels yet: the shipment's own tracking number is used.</p>` : scrollingTable('Parcels', html`<table><thead><tr><th>Weight</th><th>Size</th><th>Tracking</th><th>Label</th></tr></thead><tbody>${rows}</tbody></table>`)}
${context.can.edit ? addParcelForm(context, base, data) : ''}`
  return { content, problems: parcelProblems(context, data, canBuy === true) }
}

/** Rates, then a quote's "Buy"; the integration select's id is the parcel's own (each parcel has one). */
function labelForms(context: PageContext, base: string, parcel: Parcel, integrations: ReadonlyArray<readonly [string, string]>, quotes: RateQuote[] | null, refused: boolean): SafeHtml {
  const aria = refused ? html` aria-invalid="true" aria-describedby="${`error-label.${parcel.id}`}"` : html``
  const rates = html`<form method="post" action="${base}/${parcel.id}/rates" aria-label="Get rates">${csrfField(context.csrf)}
${select('integration', integrations[0]?.[0] ?? '', integrations, html` aria-label="Integration"${aria}`, `input-rates.${parcel.id}.integration`)} <button type="submit">Get rates</button></form>`
  if (!quotes) return rates
  const table = quotes.length === 0
    ? html`<p class="meta">No rates.</p>`
    : html`<table><thead><tr><th>Carrier</th><th>Service</th><th>Price</th><th>Days</th><th></th></tr></thead><tbody>${quotes.map(
        (quote) => html`<tr data-quote="${quote.id}"><td>${isolated(quote.carrier)}</td><td>${isolated(quote.service)}</td><td>${quote.amount} ${quote.currency}</td><td>${quote.deliveryDays ?? '—'}</td>
<td><form method="post" action="${base}/${parcel.id}/label">${csrfField(context.csrf)}<input type="hidden" name="integration" value="${quote.integration}"><input type="hidden" name="quoteId" value="${quote.id}"><button type="submit" class="primary">Buy</button></form></td></tr>`,
      )}</tbody></table>`
  return html`${rates}${scrollingTable('Rates', table)}`
}

/**
 * Change a parcel's weight and size, or remove it: while it has no label (a label was bought for that
 * size). Fields are `edit.<parcelId>.<field>`, so each parcel's form keeps its own values and errors.
 */
function changeParcelForm(context: PageContext, base: string, parcel: Parcel, data: ParcelSectionData): SafeHtml {
  const name = (key: string) => `edit.${parcel.id}.${key}`
  const shown = (key: string, stored: string) => data.values[name(key)] ?? stored
  const failed = Object.keys(data.errors).some((key) => key.startsWith(`edit.${parcel.id}.`))
  const input = (key: string, label: string, stored: string) =>
    field({ name: name(key), label, errors: data.errors }, (aria) => textInput(name(key), shown(key, stored), html`${aria} inputmode="decimal"`))
  const unit = (key: string, label: string, stored: string, units: readonly string[]) =>
    field({ name: name(key), label, errors: data.errors }, (aria) => select(name(key), shown(key, stored), units.map((each) => [each, each] as const), aria))
  const size = parcel.dimensions
  return html`<details${failed ? html` open` : ''}><summary>Change or remove</summary>
<form method="post" action="${base}/${parcel.id}/change" aria-label="${`Change parcel ${parcel.id}`}" id="${`change-parcel-${parcel.id}`}" novalidate>${csrfField(context.csrf)}
${formErrors(Object.fromEntries(Object.entries(data.errors).filter(([key]) => key === name('form'))), new Set())}
<div class="field-row">${input('weight', 'Weight', parcel.weight.value)}${unit('weightUnit', 'Unit', parcel.weight.unit, WEIGHT_UNITS)}</div>
<div class="field-row">${input('length', 'Length (optional)', size?.length ?? '')}${input('width', 'Width', size?.width ?? '')}${input('height', 'Height', size?.height ?? '')}
${unit('dimensionUnit', 'Unit', size?.unit ?? 'cm', DIMENSION_UNITS)}</div>
<button type="submit">Save parcel</button></form>
<form method="post" action="${base}/${parcel.id}/remove" data-confirm="Remove this parcel?">${csrfField(context.csrf)}<button type="submit" class="danger">Remove parcel</button></form></details>`
}

function addParcelForm(context: PageContext, base: string, data: ParcelSectionData): SafeHtml {
  const { errors, values } = data
  const names = new Set(['parcel.weight', 'parcel.weightUnit'])
  return html`<form method="post" action="${base}" aria-label="Add a parcel" id="add-parcel" novalidate>${csrfField(context.csrf)}
${formErrors(Object.fromEntries(Object.entries(errors).filter(([name]) => name.startsWith('parcel.') && !names.has(name))), new Set())}
<div class="field-row">
${field({ name: 'parcel.weight', label: 'Weight', errors }, (aria) => textInput('parcel.weight', values['parcel.weight'] ?? '', html`${aria} inputmode="decimal"`))}
${field({ name: 'parcel.weightUnit', label: 'Unit', errors }, (aria) => select('parcel.weightUnit', values['parcel.weightUnit'] ?? 'kg', WEIGHT_UNITS.map((unit) => [unit, unit] as const), aria))}
</div>
<button type="submit">Add parcel</button></form>
<form method="post" action="${base}/suggest" aria-label="Suggest parcels">${csrfField(context.csrf)}<button type="submit">Suggest parcels from boxes</button></form>
${data.suggestion ? suggestionPanel(context, base, data.suggestion) : ''}`
}

/**
 * A suggestion as it will be created: its parcels and what was left out, and an "Accept" form that
 * passes it back whole (its id covers it: accepted as shown, not packed again; refused if the shipment
 * or the boxes changed since).
 */
function suggestionPanel(context: PageContext, base: string, suggestion: ParcelSuggestion): SafeHtml {
  const { parcels, unpacked } = suggestion
  const itemsText = (items: ParcelSuggestion['parcels'][number]['items']) => items.map((item) => `${item.quantity} × line ${item.lineItemId}`).join(', ')
  return html`<section class="suggestion" aria-labelledby="suggested-parcels" data-suggestion="${suggestion.id}"><h3 id="suggested-parcels">Suggested parcels</h3>
${
  parcels.length === 0
    ? html`<p>No parcel: nothing could be packed into the boxes.</p>`
    : scrollingTable(
        'Suggested parcels',
        html`<table><thead><tr><th>Box</th><th>Items</th><th class="num">Weight</th><th>Size</th></tr></thead><tbody>${parcels.map(
          (parcel) => html`<tr><td>${parcel.box.name}</td><td>${itemsText(parcel.items)}</td><td class="num">${parcel.weight.value} ${parcel.weight.unit}</td><td>${parcel.dimensions.length} × ${parcel.dimensions.width} × ${parcel.dimensions.height} ${parcel.dimensions.unit}</td></tr>`,
        )}</tbody></table>`,
      )
}
${unpacked.length > 0 ? html`<p>Left out:</p><ul>${unpacked.map((item) => html`<li>${item.quantity} × line ${item.lineItemId}: ${item.reason}</li>`)}</ul>` : ''}
${
  parcels.length > 0
    ? html`<form method="post" action="${base}/accept-suggestion" aria-label="Accept the suggested parcels">${csrfField(context.csrf)}<input type="hidden" name="suggestion" value="${JSON.stringify({ id: suggestion.id, parcels })}"><button type="submit">${parcels.length === 1 ? 'Accept this parcel' : `Accept these ${parcels.length} parcels`}</button></form>`
    : ''
}</section>`
}

/** The ship-from form's fields: `shipFrom.<field>` names, so they never clash with the box form's. */
export const SHIP_FROM_FIELDS = [
  ['name', 'Name (optional)'],
  ['company', 'Company (optional)'],
  ['street1', 'Street'],
  ['street2', 'Street, second line (optional)'],
  ['city', 'City'],
  ['state', 'State or region (optional)'],
  ['postalCode', 'Postal code'],
  ['country', 'Country (two letters, such as US)'],
  ['phone', 'Phone (optional)'],
  ['email', 'Email (optional)'],
] as const

export interface ShipFromForm {
  values: Record<string, string>
  /** Where the address shown comes from. */
  source: 'setting' | 'option' | null
}

function shipFromSection(context: PageContext, form: ShipFromForm, errors: FieldErrors): SafeHtml {
  const origin =
    form.source === 'setting'
      ? 'Rates and labels use this address.'
      : form.source === 'option'
        ? "Rates and labels use the host's default (the deliveries.shipFrom option) until you save one here."
        : 'No address yet: rates and labels are refused until one is saved.'
  const fieldNames = new Set(SHIP_FROM_FIELDS.map(([name]) => `shipFrom.${name}`))
  const inputs = SHIP_FROM_FIELDS.map(([name, label]) =>
    field({ name: `shipFrom.${name}`, label, errors }, (aria) => textInput(`shipFrom.${name}`, form.values[`shipFrom.${name}`] ?? '', aria)),
  )
  return html`<h2 id="ship-from">Ship-from address</h2><p class="meta">${origin}</p>
${context.can.edit ? html`<form method="post" action="${context.prefix}/boxes/ship-from" aria-labelledby="ship-from" id="ship-from-address" novalidate>${csrfField(context.csrf)}
${formErrors(Object.fromEntries(Object.entries(errors).filter(([name]) => name.startsWith('shipFrom.'))), fieldNames)}${inputs}<button type="submit" class="primary">Save address</button></form>` : html`<p dir="auto">${SHIP_FROM_FIELDS.map(([name]) => form.values[`shipFrom.${name}`]).filter(Boolean).join(', ')}</p>`}`
}

/** A box's own form (fields `box.<id>.<field>`), open when its last save was refused. */
function changeBoxForm(context: PageContext, url: string, box: Box, data: { values: Record<string, string>; errors: FieldErrors }): SafeHtml {
  const name = (key: string) => `box.${box.id}.${key}`
  const stored: Record<string, string> = {
    name: box.name,
    length: box.innerDimensions.length,
    width: box.innerDimensions.width,
    height: box.innerDimensions.height,
    dimensionUnit: box.innerDimensions.unit,
    emptyWeight: box.emptyWeight.value,
    maxWeight: box.maxWeight.value,
    weightUnit: box.maxWeight.unit,
  }
  const shown = (key: string) => data.values[name(key)] ?? stored[key] ?? ''
  const input = (key: string, label: string) => field({ name: name(key), label, errors: data.errors }, (aria) => textInput(name(key), shown(key), aria))
  const unit = (key: string, label: string, units: readonly string[]) =>
    field({ name: name(key), label, errors: data.errors }, (aria) => select(name(key), shown(key), units.map((each) => [each, each] as const), aria))
  const failed = Object.keys(data.errors).some((key) => key.startsWith(`box.${box.id}.`))
  return html`<details${failed ? html` open` : ''}><summary>Change</summary><form method="post" action="${url}/${box.id}" aria-label="${`Change box ${box.name}`}" id="${`change-box-${box.id}`}" novalidate>${csrfField(context.csrf)}
${input('name', 'Name')}<div class="field-row">${input('length', 'Inner length')}${input('width', 'Inner width')}${input('height', 'Inner height')}${unit('dimensionUnit', 'Unit', DIMENSION_UNITS)}</div>
<div class="field-row">${input('emptyWeight', 'Empty weight')}${input('maxWeight', 'Maximum weight')}${unit('weightUnit', 'Unit', WEIGHT_UNITS)}</div>
<button type="submit">Save box</button></form></details>`
}

/** A box form's fields (the add form's names; a box's own form prefixes them `box.<id>.`) and their labels. */
const BOX_FIELDS = new Map([
  ['name', 'Name'],
  ['length', 'Inner length'],
  ['width', 'Inner width'],
  ['height', 'Inner height'],
  ['dimensionUnit', 'Size unit'],
  ['emptyWeight', 'Empty weight'],
  ['maxWeight', 'Maximum weight'],
  ['weightUnit', 'Weight unit'],
])

/**
 * The Boxes page's problems for its error summary, named by form (the new box, a box by its name, the
 * ship-from address): a field's message links to its input, a form's other messages to the form.
 */
function boxPageProblems(context: PageContext, boxes: Box[], errors: FieldErrors): SummaryEntry[] {
  const targets: Record<string, string> = {}
  const labels: Record<string, string> = {}
  const shipFromLabels = new Map<string, string>(SHIP_FROM_FIELDS)
  for (const name of Object.keys(errors)) {
    const parts = name.split('.')
    if (parts[0] === 'shipFrom') {
      const label = shipFromLabels.get(parts[1] ?? '')
      labels[name] = label ? `Ship-from address, ${label.replace(/ \(.*\)$/, '')}` : 'Ship-from address'
      if (context.can.edit) targets[name] = label ? `input-${name}` : 'ship-from-address'
    } else if (parts[0] === 'box' && parts.length === 3) {
      const box = boxes.find((each) => String(each.id) === parts[1])
      const label = BOX_FIELDS.get(parts[2]!)
      labels[name] = `Box ${box?.name ?? parts[1]}${label ? `, ${label}` : ''}`
      if (box && context.can.edit) targets[name] = label ? `input-${name}` : `change-box-${box.id}`
    } else {
      const label = BOX_FIELDS.get(name)
      labels[name] = `New box${label ? `, ${label}` : ''}`
      if (context.can.edit) targets[name] = label ? `input-${name}` : 'add-box'
    }
  }
  return summaryEntries(errors, new Set(), targets, labels)
}

/** The box catalogue page: the boxes (each changed from its own form), a form to add one, the ship-from address. */
export function boxCataloguePage(context: PageContext, data: { boxes: Box[]; values: Record<string, string>; errors: FieldErrors; flash: string | null; shipFrom: ShipFromForm }): SafeHtml {
  const { values, errors } = data
  const url = `${context.prefix}/boxes`
  const input = (name: string, label: string, hint?: string) =>
    field({ name, label, errors, hint }, (aria) => textInput(name, values[name] ?? '', html`${aria} inputmode="decimal"`))
  const rows = data.boxes.map(
    (box) => html`<tr data-box="${box.id}"><td>${isolated(box.name)}${box.enabled ? '' : html` <span class="meta">(disabled)</span>`}</td>
<td>${box.innerDimensions.length} × ${box.innerDimensions.width} × ${box.innerDimensions.height} ${box.innerDimensions.unit}</td>
<td>${box.emptyWeight.value} ${box.emptyWeight.unit}</td><td>${box.maxWeight.value} ${box.maxWeight.unit}</td>
<td>${context.can.edit ? html`${changeBoxForm(context, url, box, data)}<form method="post" action="${url}/${box.id}/delete" data-confirm="Remove this box?">${csrfField(context.csrf)}<button type="submit" class="danger">Remove</button></form>` : ''}</td></tr>`,
  )
  const fieldNames = new Set(['name', 'length', 'width', 'height', 'dimensionUnit', 'emptyWeight', 'maxWeight', 'weightUnit'])
  return html`${errorSummary(boxPageProblems(context, data.boxes, errors))}<h1>Boxes</h1>
${data.flash ? html`<div class="notice notice-ok" role="status">${data.flash}</div>` : ''}
${data.boxes.length === 0 ? html`<p class="meta">No boxes yet: "Suggest parcels" needs at least one.</p>` : scrollingTable('Boxes', html`<table><thead><tr><th>Name</th><th>Inner size</th><th>Empty weight</th><th>Maximum weight</th><th></th></tr></thead><tbody>${rows}</tbody></table>`)}
${context.can.edit ? html`<h2>Add a box</h2><form method="post" action="${url}" aria-label="Add a box" id="add-box" novalidate>${csrfField(context.csrf)}
${formErrors(Object.fromEntries(Object.entries(errors).filter(([name]) => !name.includes('.'))), fieldNames)}
${field({ name: 'name', label: 'Name', errors }, (aria) => textInput('name', values.name ?? '', aria))}
<div class="field-row">${input('length', 'Inner length')}${input('width', 'Inner width')}${input('height', 'Inner height')}
${field({ name: 'dimensionUnit', label: 'Unit', errors }, (aria) => select('dimensionUnit', values.dimensionUnit ?? 'cm', DIMENSION_UNITS.map((unit) => [unit, unit] as const), aria))}</div>
<div class="field-row">${input('emptyWeight', 'Empty weight')}${input('maxWeight', 'Maximum weight', 'The packed box, empty box included.')}
${field({ name: 'weightUnit', label: 'Unit', errors }, (aria) => select('weightUnit', values.weightUnit ?? 'g', WEIGHT_UNITS.map((unit) => [unit, unit] as const), aria))}</div>
<button type="submit" class="primary">Add box</button></form>` : ''}
${shipFromSection(context, data.shipFrom, data.errors)}`
}
