// A parcel's customs declaration: built from its items and the order lines' customs data under the shop's
// settings, checked field by field (the problems that refuse rates and labels, each naming its line and
// field), and turned into what a provider is sent. Pure functions: no store, no provider.
import type { CustomsDeclarationRow, CustomsFormRow, CustomsItemRow, NewCustomsDeclaration } from '../db/customs.js'
import type { ParcelItem, ParcelRow } from '../db/parcels.js'
import type { CustomsInfo } from '../gateway/delivery-provider.js'
import { decimalProblem, toOunces, type WeightUnit } from '../model/units.js'
import type { OrderLine } from '../order-store.js'
import { compareExact, exactGrams, isPlainDecimal, isZero, sumDecimals, timesQuantity, totalWeight } from './decimals.js'
import type { ResolvedCustomsOptions } from './options.js'

/** The shop's customs settings: what every declaration starts from. */
export type CustomsSettings = ResolvedCustomsOptions

/** The settings with who saved them last and when (null: the plugin's options, never saved). */
export interface SavedCustomsSettings extends CustomsSettings {
  savedAt: string | null
  savedBy: string | null
}

/** The settings' fields a declaration carries (everything but its items). */
export const SETTING_FIELDS = ['contentsType', 'contentsExplanation', 'nonDeliveryOption', 'restrictionType', 'restrictionComments', 'signer', 'certify', 'incoterm', 'eelPfc', 'currency'] as const

export type DeclarationItem = CustomsItemRow

/** A declaration as clients see it: the declaration, its totals and its problems (field path -> messages; empty when complete). */
export interface CustomsDeclaration extends CustomsSettings {
  parcelId: number
  shipmentId: number
  items: DeclarationItem[]
  /** False: the declaration built from the parcel's items (rebuilt when they change); true: a store admin's edit, kept. */
  edited: boolean
  /** An edited declaration whose lines no longer match the parcel's items (the parcel changed after the edit). */
  stale: boolean
  /** Whether it is stored (an edit, or the one a label was bought with); false: built for this answer. */
  stored: boolean
  forms: CustomsFormRow[]
  totals: { value: string; weight: { value: string; unit: WeightUnit } }
  problems: Record<string, string[]>
}

/** A parcel's customs: required when its ship-from and ship-to countries differ, then with its declaration. */
export interface ParcelCustoms {
  parcelId: number
  required: boolean
  fromCountry: string
  toCountry: string
  declaration: CustomsDeclaration | null
}

/** 6 to 10 digits, dots allowed between them ("6109.10", "6109100010"). */
const TARIFF_NUMBER = /^\d[\d.]*\d$/
const COUNTRY = /^[A-Z]{2}$/

/** Whether a parcel from `from` to `to` crosses a border (countries compared as ISO codes, any case). */
export const crossesBorder = (fromCountry: string, toCountry: string) => fromCountry.trim().toUpperCase() !== toCountry.trim().toUpperCase()

/**
 * The items a parcel holds: its own list; else (a parcel that lists none) the shipment's items; else (an
 * order-level shipment, which ships every shippable line in full) the order's shippable lines.
 */
export function itemsOfParcel(parcel: Pick<ParcelRow, 'items'>, shipmentItems: readonly ParcelItem[], lines: ReadonlyMap<number, OrderLine>): ParcelItem[] {
  const items = parcel.items.length > 0 ? parcel.items : shipmentItems.length > 0 ? shipmentItems : [...lines.values()].filter((line) => line.shippable).map((line) => ({ lineItemId: line.id, quantity: line.quantity }))
  return items.map((item) => ({ lineItemId: item.lineItemId, quantity: item.quantity }))
}

/** One unit's weight of a line, when it is an exact positive decimal. */
function unitWeight(line: OrderLine | undefined): { value: string; unit: WeightUnit } | null {
  const weight = line?.weight
  return weight && decimalProblem(weight.value) === null ? { value: weight.value, unit: weight.unit } : null
}

/** The declaration built from the parcel's items and the lines' customs data, under the settings. Values and weights are unit x quantity, exactly. */
export function buildDeclaration(input: { parcel: Pick<ParcelRow, 'id' | 'shipmentId' | 'weightUnit'>; items: readonly ParcelItem[]; lines: ReadonlyMap<number, OrderLine>; settings: CustomsSettings }): NewCustomsDeclaration {
  const { parcel, lines, settings } = input
  const items = input.items.map((item): CustomsItemRow => {
    const line = lines.get(item.lineItemId)
    const customs = line?.customs ?? null
    const unitValue = customs?.value && customs.value.currency.toUpperCase() === settings.currency && isPlainDecimal(customs.value.amount) ? customs.value.amount : null
    const weight = unitWeight(line)
    return {
      lineItemId: item.lineItemId,
      description: (customs?.description || line?.name || '').trim(),
      quantity: item.quantity,
      // A value in another currency (or none) is left at zero: a problem the store admin fills in, never a guessed rate.
      value: unitValue === null ? '0' : timesQuantity(unitValue, item.quantity),
      weight: weight ? { value: timesQuantity(weight.value, item.quantity), unit: weight.unit } : { value: '0', unit: parcel.weightUnit as WeightUnit },
      tariffNumber: customs?.tariffNumber?.trim() || null,
      originCountry: customs?.originCountry?.trim().toUpperCase() || null,
      sku: line?.sku ?? null,
    }
  })
  return { parcelId: parcel.id, shipmentId: parcel.shipmentId, ...pickSettings(settings), items, edited: false }
}

export function pickSettings(settings: CustomsSettings): CustomsSettings {
  return Object.fromEntries(SETTING_FIELDS.map((field) => [field, settings[field]])) as CustomsSettings
}

/** The totals of a declaration: the items' value and weight, exact. */
export function totalsOf(items: readonly CustomsItemRow[], fallbackUnit: WeightUnit): CustomsDeclaration['totals'] {
  const values = items.map((item) => item.value).filter(isPlainDecimal)
  const weights = items.filter((item) => isPlainDecimal(item.weight.value)).map((item) => item.weight)
  return { value: sumDecimals(values), weight: totalWeight(weights, fallbackUnit) }
}

/** Per order line, the quantity the declaration's items declare. */
function declaredByLine(items: readonly CustomsItemRow[]): Map<number, number> {
  const declared = new Map<number, number>()
  for (const item of items) if (item.lineItemId !== null) declared.set(item.lineItemId, (declared.get(item.lineItemId) ?? 0) + item.quantity)
  return declared
}

/** Whether an edited declaration's lines no longer declare exactly what the parcel holds. */
export function isStale(items: readonly CustomsItemRow[], parcelItems: readonly ParcelItem[]): boolean {
  const declared = declaredByLine(items)
  const held = new Map(parcelItems.map((item) => [item.lineItemId, item.quantity]))
  if (declared.size !== held.size) return true
  return [...held].some(([lineItemId, quantity]) => declared.get(lineItemId) !== quantity)
}

type Problems = Record<string, string[]>
const add = (problems: Problems, field: string, message: string) => void (problems[field] ??= []).push(message)

/** The problems of the settings' part of a declaration (also the checks of the settings themselves). */
export function settingProblems(settings: CustomsSettings): Problems {
  const problems: Problems = {}
  if (settings.contentsType === 'other' && !settings.contentsExplanation?.trim()) add(problems, 'contentsExplanation', 'is required when the contents type is "other": say what the parcel holds')
  if (settings.restrictionType !== 'none' && !settings.restrictionComments?.trim()) add(problems, 'restrictionComments', `is required when the restriction type is "${settings.restrictionType}"`)
  if (settings.certify && !settings.signer?.trim()) add(problems, 'signer', 'is required when the declaration is certified: the name of the person who signs it')
  if (!/^[A-Z]{3}$/.test(settings.currency)) add(problems, 'currency', 'must be an ISO 4217 code such as USD')
  return problems
}

/** Each item's own problems, under `items[i].field`. */
function itemProblems(item: CustomsItemRow, index: number, currency: string, problems: Problems): void {
  const at = `items[${index}]`
  if (!item.description.trim()) add(problems, `${at}.description`, 'is required: what the goods are, in words customs accept')
  if (!Number.isSafeInteger(item.quantity) || item.quantity < 1) add(problems, `${at}.quantity`, 'must be a whole number of at least 1')
  const tariff = item.tariffNumber ?? ''
  const digits = tariff.replaceAll('.', '').length
  if (!tariff) add(problems, `${at}.tariffNumber`, 'is required: the HS tariff number (6 to 10 digits)')
  else if (!TARIFF_NUMBER.test(tariff) || tariff.includes('..') || digits < 6 || digits > 10) add(problems, `${at}.tariffNumber`, 'must be 6 to 10 digits (dots allowed between them), such as 6109.10')
  if (!item.originCountry) add(problems, `${at}.originCountry`, 'is required: the country where the goods were made (ISO 3166-1 alpha-2, such as US)')
  else if (!COUNTRY.test(item.originCountry)) add(problems, `${at}.originCountry`, 'must be an ISO 3166-1 alpha-2 code in capitals, such as US')
  if (!isPlainDecimal(item.value)) add(problems, `${at}.value`, `must be a decimal amount in ${currency}, such as "59.97"`)
  else if (isZero(item.value)) add(problems, `${at}.value`, `must be greater than 0: the line's total value in ${currency}`)
  if (decimalProblem(item.weight.value) !== null) add(problems, `${at}.weight`, "must be greater than 0: the line's total weight (give the order line a weight, or enter it here)")
}

/**
 * Every problem of a declaration for this parcel, by field path (`items[1].tariffNumber`); empty when it
 * is complete. Weights must add up (the contents never weigh more than the parcel, compared exactly across
 * units) and the items never declare more of a line than the parcel holds.
 */
export function declarationProblems(declaration: Pick<NewCustomsDeclaration, 'items' | (typeof SETTING_FIELDS)[number]>, parcel: Pick<ParcelRow, 'weight' | 'weightUnit'>, parcelItems: readonly ParcelItem[]): Problems {
  const problems = settingProblems(declaration)
  if (declaration.items.length === 0) add(problems, 'items', 'at least one item is required')
  declaration.items.forEach((item, index) => itemProblems(item, index, declaration.currency, problems))
  const held = new Map(parcelItems.map((item) => [item.lineItemId, item.quantity]))
  const declared = declaredByLine(declaration.items)
  declaration.items.forEach((item, index) => {
    if (item.lineItemId === null) return
    const holds = held.get(item.lineItemId) ?? 0
    if (holds === 0) add(problems, `items[${index}].lineItemId`, `the parcel holds no unit of order line ${item.lineItemId}`)
    else if ((declared.get(item.lineItemId) ?? 0) > holds) add(problems, `items[${index}].quantity`, `the items declare ${declared.get(item.lineItemId)} of order line ${item.lineItemId}; the parcel holds ${holds}`)
  })
  const weights = declaration.items.map((item) => item.weight).filter((weight) => isPlainDecimal(weight.value))
  if (weights.length > 0 && decimalProblem(parcel.weight) === null) {
    const contents = sumDecimals(weights.map((weight) => exactGrams(weight.value, weight.unit)))
    if (compareExact(contents, exactGrams(parcel.weight, parcel.weightUnit as WeightUnit)) > 0) {
      const total = totalWeight(weights, parcel.weightUnit as WeightUnit)
      add(problems, 'totals.weight', `the items weigh ${total.value} ${total.unit}, more than the parcel (${parcel.weight} ${parcel.weightUnit}): correct the items' or the parcel's weight`)
    }
  }
  return problems
}

/** A complete declaration as a provider is sent it: values exact, weights in ounces rounded up to one decimal. */
export function toCustomsInfo(declaration: Pick<CustomsDeclarationRow, 'items' | (typeof SETTING_FIELDS)[number]>): CustomsInfo {
  return {
    contentsType: declaration.contentsType as CustomsInfo['contentsType'],
    contentsExplanation: declaration.contentsExplanation,
    nonDeliveryOption: declaration.nonDeliveryOption as CustomsInfo['nonDeliveryOption'],
    restrictionType: declaration.restrictionType as CustomsInfo['restrictionType'],
    restrictionComments: declaration.restrictionComments,
    signer: declaration.signer ?? '',
    certify: declaration.certify,
    incoterm: declaration.incoterm as CustomsInfo['incoterm'],
    eelPfc: declaration.eelPfc,
    currency: declaration.currency,
    items: declaration.items.map((item) => ({
      description: item.description,
      quantity: item.quantity,
      value: item.value,
      weightOunces: toOunces(item.weight.value, item.weight.unit),
      tariffNumber: item.tariffNumber!,
      originCountry: item.originCountry!,
      sku: item.sku,
    })),
  }
}
