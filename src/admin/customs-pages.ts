// The customs screens: the shop's customs settings (a form, saved whole), and the shipment page's Customs
// section: each international parcel's declaration as a form (a row per item, rows added and removed, the
// settings' fields), its problems beside the fields, and "Reset to built".
import type { CustomsDeclaration, ParcelCustoms, SavedCustomsSettings } from '../customs/model.js'
import type { CustomsService } from '../customs/service.js'
import { ShipmentUpdateRejectedError } from '../errors.js'
import { CONTENTS_TYPES, INCOTERMS, NON_DELIVERY_OPTIONS, RESTRICTION_TYPES } from '../customs/options.js'
import { WEIGHT_UNITS } from '../model/units.js'
import { html, type SafeHtml } from '../html.js'
import { csrfField, errorSummary, fieldErrors, formErrors, notice, scrollingTable, select, summaryEntries, type FieldErrors, type PageContext, type PageSection } from './components.js'

/** The settings' fields with their labels, in the form's order. */
const SETTING_LABELS: ReadonlyArray<readonly [string, string]> = [
  ['contentsType', 'Contents type'],
  ['contentsExplanation', 'Contents explanation'],
  ['nonDeliveryOption', 'If undeliverable'],
  ['restrictionType', 'Restriction'],
  ['restrictionComments', 'Restriction comments'],
  ['signer', 'Signer'],
  ['certify', 'The signer certifies the declaration'],
  ['incoterm', 'Incoterm'],
  ['eelPfc', 'EEL/PFC or ITN'],
  ['currency', 'Currency'],
]
const ITEM_LABELS: ReadonlyArray<readonly [string, string]> = [
  ['description', 'Description'],
  ['quantity', 'Quantity'],
  ['value', 'Total value'],
  ['weight.value', 'Total weight'],
  ['weight.unit', 'Unit'],
  ['tariffNumber', 'Tariff number'],
  ['originCountry', 'Origin'],
  ['sku', 'SKU'],
]
const CHOICES: Record<string, ReadonlyArray<readonly [string, string]>> = {
  contentsType: CONTENTS_TYPES.map((each) => [each, each.replace('_', ' ')] as const),
  nonDeliveryOption: NON_DELIVERY_OPTIONS.map((each) => [each, each === 'return' ? 'Return to sender' : 'Abandon'] as const),
  restrictionType: RESTRICTION_TYPES.map((each) => [each, each.replaceAll('_', ' ')] as const),
  incoterm: INCOTERMS.map((each) => [each, each === 'DDU' ? 'DDU: the customer pays duties' : 'DDP: the shop pays duties'] as const),
}

/** A declaration's or the settings' values as the form shows them (`items[0].weight.value`...). */
export function customsFormValues(source: SavedCustomsSettings | CustomsDeclaration): Record<string, string> {
  const values: Record<string, string> = {}
  for (const [name] of SETTING_LABELS) {
    const value = (source as unknown as Record<string, unknown>)[name]
    values[name] = name === 'certify' ? (value ? 'true' : '') : value === null || value === undefined ? '' : String(value)
  }
  if ('items' in source) {
    source.items.forEach((item, index) => {
      const at = `items[${index}]`
      Object.assign(values, {
        [`${at}.lineItemId`]: item.lineItemId === null ? '' : String(item.lineItemId),
        [`${at}.description`]: item.description,
        [`${at}.quantity`]: String(item.quantity),
        [`${at}.value`]: item.value,
        [`${at}.weight.value`]: item.weight.value,
        [`${at}.weight.unit`]: item.weight.unit,
        [`${at}.tariffNumber`]: item.tariffNumber ?? '',
        [`${at}.originCountry`]: item.originCountry ?? '',
        [`${at}.sku`]: item.sku ?? '',
      })
    })
    values.itemCount = String(source.items.length)
  }
  return values
}

/** The service's field paths as the form's: an item's weight problem sits beside its value. */
export const formFieldOf = (path: string) => path.replace(/^(items\[\d+\])\.weight$/, '$1.weight.value')

/** The settings' controls, their names prefixed with `prefix` (one form per parcel on a page). */
function settingFields(prefix: string, values: Record<string, string>, errors: FieldErrors, disabled: SafeHtml): SafeHtml {
  return html`${SETTING_LABELS.map(([name, label]) => {
    const id = `${prefix}${name}`
    const failed = (errors[id] ?? []).length > 0
    const aria = html`${failed ? html` aria-invalid="true" aria-describedby="${`error-${id}`}"` : ''}${disabled}`
    const value = values[name] ?? ''
    const control =
      name === 'certify'
        ? html`<input type="checkbox" id="${`input-${id}`}" name="${id}" value="true"${value === 'true' ? html` checked` : ''}${aria}>`
        : CHOICES[name]
          ? select(id, value, CHOICES[name]!, aria, `input-${id}`)
          : html`<input type="text" id="${`input-${id}`}" name="${id}" value="${value}"${aria}>`
    return html`<div class="field${failed ? ' has-error' : ''}" data-field="${id}"><label for="${`input-${id}`}">${label}</label>${control}${fieldErrors(errors, id)}</div>`
  })}`
}

/** The item rows: one per item, each control labelled by its column and row, its problems below it. */
function itemRows(prefix: string, values: Record<string, string>, errors: FieldErrors, disabled: SafeHtml): SafeHtml {
  const count = Number(values.itemCount ?? '0')
  const rows = Array.from({ length: count }, (_, index) => {
    const at = `${prefix}items[${index}]`
    const cell = (name: string, label: string) => {
      const id = `${at}.${name}`
      const failed = (errors[id] ?? []).length > 0
      const aria = html` aria-label="${`${label}, row ${index + 1}`}"${failed ? html` aria-invalid="true" aria-describedby="${`error-${id}`}"` : ''}${disabled}`
      const value = values[`items[${index}].${name}`] ?? ''
      const control = name === 'weight.unit' ? select(id, value || 'kg', WEIGHT_UNITS.map((unit) => [unit, unit] as const), aria, `input-${id}`) : html`<input type="text" id="${`input-${id}`}" name="${id}" value="${value}"${aria}>`
      return html`<td class="${failed ? 'has-error' : ''}">${control}${fieldErrors(errors, id)}</td>`
    }
    return html`<tr><td><input type="hidden" name="${`${at}.lineItemId`}" value="${values[`items[${index}].lineItemId`] ?? ''}">${index + 1}</td>${ITEM_LABELS.map(([name, label]) => cell(name, label))}
<td><input type="checkbox" id="${`input-${at}.remove`}" name="${`${at}.remove`}" value="true" aria-label="${`Remove row ${index + 1}`}"${disabled}></td></tr>`
  })
  return scrollingTable(
    'Declared items',
    html`<table class="customs-items"><thead><tr><th scope="col">Row</th>${ITEM_LABELS.map(([, label]) => html`<th scope="col">${label}</th>`)}<th scope="col">Remove</th></tr></thead><tbody>${rows}</tbody></table>`,
  )
}

/** The names of a declaration form's controls (prefixed), for the error summary's links. */
function fieldNamesOf(prefix: string, values: Record<string, string>): Set<string> {
  const names = new Set(SETTING_LABELS.map(([name]) => `${prefix}${name}`))
  for (let index = 0; index < Number(values.itemCount ?? '0'); index++) for (const [name] of ITEM_LABELS) names.add(`${prefix}items[${index}].${name}`)
  return names
}

/** What a parcel's form shows: a refused save's values and errors, else the declaration's own with its problems. */
export interface CustomsFormState {
  parcelId: number
  /** null: the declaration's own values. */
  values: Record<string, string> | null
  errors: FieldErrors
}

type ShownCustoms = ParcelCustoms & { declaration: CustomsDeclaration; labelled: boolean }

function declarationForm(context: PageContext, shipmentId: number, customs: ShownCustoms, state: CustomsFormState | null): { content: SafeHtml; problems: ReturnType<typeof summaryEntries> } {
  const { declaration } = customs
  const prefix = `parcel${customs.parcelId}.`
  const values = state?.values ?? customsFormValues(declaration)
  const own = state?.errors ?? Object.fromEntries(Object.entries(declaration.problems).map(([path, messages]) => [formFieldOf(path), messages]))
  const errors = Object.fromEntries(Object.entries(own).map(([name, messages]) => [`${prefix}${name}`, messages]))
  const names = fieldNamesOf(prefix, values)
  const url = `${context.prefix}/shipments/${shipmentId}/parcels/${customs.parcelId}/customs`
  // A labelled parcel's declaration is the one its label was bought with: shown, not editable.
  const labelled = customs.labelled || !context.can.edit
  const disabled = labelled ? html` disabled` : html``
  const count = Object.keys(declaration.problems).length
  const status =
    count === 0
      ? notice('ok', html`Complete: rates and labels send this declaration.`)
      : html`<p class="meta" id="${`customs-status-${customs.parcelId}`}">${count} field${count === 1 ? '' : 's'} to complete: rates and labels are refused until then (each problem is shown beside its field).</p>`
  const content = html`<h3 id="${`customs-parcel-${customs.parcelId}`}">Parcel ${customs.parcelId}: ${customs.fromCountry} to ${customs.toCountry}</h3>
${status}
<p class="meta">${declaration.edited ? 'Edited: kept as saved.' : 'Built from the parcel\u2019s items and the order lines: it follows them until edited.'}${declaration.stale ? ' The parcel\u2019s items changed since this edit: check the rows, or reset to the built declaration.' : ''}
Totals: ${declaration.totals.value} ${declaration.currency}, ${declaration.totals.weight.value} ${declaration.totals.weight.unit}.</p>
<form method="post" action="${url}" novalidate aria-label="${`Customs declaration of parcel ${customs.parcelId}`}">
${csrfField(context.csrf)}<input type="hidden" name="itemCount" value="${values.itemCount ?? '0'}">
${formErrors(errors, names)}
${settingFields(prefix, values, errors, disabled)}
${itemRows(prefix, values, errors, disabled)}
${labelled ? '' : html`<div class="actions"><button type="submit" class="primary" name="action" value="save">Save declaration</button> <button type="submit" name="action" value="addRow">Add a row</button></div>`}
</form>
${declaration.edited && !labelled ? html`<form method="post" action="${`${url}/reset`}" aria-label="${`Reset the declaration of parcel ${customs.parcelId}`}">${csrfField(context.csrf)}<button type="submit">Reset to built</button></form>` : ''}`
  return { content, problems: state ? summaryEntries(errors, names, Object.fromEntries([...names].map((name) => [name, `input-${name}`]))) : [] }
}

/** The shipment page's Customs section: one declaration per parcel that crosses a border; null when none does. */
export function customsSection(context: PageContext, shipmentId: number, parcels: Array<ParcelCustoms & { labelled: boolean }>, state: CustomsFormState | null, failure: string | null = null): PageSection | null {
  const international = parcels.filter((each): each is ShownCustoms => each.required && each.declaration !== null)
  if (international.length === 0 && failure === null) return null
  const forms = international.map((customs) => declarationForm(context, shipmentId, customs, state?.parcelId === customs.parcelId ? state : null))
  return {
    content: html`<section id="customs" aria-labelledby="customs-title"><h2 id="customs-title">Customs</h2>
${failure ? notice('error', failure) : ''}${forms.map((form) => form.content)}</section>`,
    problems: forms.flatMap((form) => form.problems),
  }
}

/** The Customs page: the shop's settings every declaration starts from, saved whole. */
export function customsSettingsPage(context: PageContext, data: { saved: SavedCustomsSettings; values: Record<string, string>; errors: FieldErrors; flash: string | null }): SafeHtml {
  const names = new Set(SETTING_LABELS.map(([name]) => name))
  const disabled = context.can.edit ? html`` : html` disabled`
  return html`${errorSummary(summaryEntries(data.errors, names))}<h1>Customs</h1>
${data.flash ? notice('ok', data.flash) : ''}
<p>What every customs declaration starts from: parcels whose ship-from and ship-to countries differ get one, built from their items and the order lines' customs data. ${data.saved.savedAt ? html`Saved ${data.saved.savedAt}${data.saved.savedBy ? ` by ${data.saved.savedBy}` : ''}.` : 'These are the plugin\u2019s options: nothing was saved here yet.'}</p>
<form method="post" action="${`${context.prefix}/customs`}" novalidate aria-label="Customs settings">
${csrfField(context.csrf)}
${formErrors(data.errors, names)}
${settingFields('', data.values, data.errors, disabled)}
${context.can.edit ? html`<button type="submit" class="primary">Save</button>` : html`<p class="meta">You may view the customs settings, not change them.</p>`}
</form>`
}

/**
 * The shipment page's Customs section, read through the customs service: one declaration per parcel
 * that crosses a border. Parcels without a ship-from or ship-to address yet have none to show; any
 * other failure costs the section a notice, never the page.
 */
export async function loadCustomsSection(
  customs: Pick<CustomsService, 'parcelCustoms'>,
  context: PageContext,
  shipment: { id: number; parcels: ReadonlyArray<{ id: number; status: string }> },
  state: CustomsFormState | null,
  log: (error: unknown) => void,
): Promise<PageSection | null> {
  try {
    const parcels = await Promise.all(shipment.parcels.map(async (parcel) => ({ ...(await customs.parcelCustoms(shipment.id, parcel.id)), labelled: parcel.status !== 'pending' })))
    return customsSection(context, shipment.id, parcels, state)
  } catch (error) {
    if (error instanceof ShipmentUpdateRejectedError) return null
    log(error)
    return customsSection(context, shipment.id, [], null, 'The customs declarations could not be read now.')
  }
}
