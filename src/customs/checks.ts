// The checks of what a store admin sends: the customs settings and an edited declaration, each field
// named when refused (a 422 by field), before anything is written. Whether a declaration is complete
// for its parcel is model.ts's (declarationProblems); here only its form.
import type { CustomsItemRow } from '../db/customs.js'
import { ShipmentValidationError } from '../errors.js'
import { decimalProblem, WEIGHT_UNITS, type WeightUnit } from '../model/units.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import { isPlainDecimal } from './decimals.js'
import { settingProblems, SETTING_FIELDS, type CustomsSettings } from './model.js'
import { CONTENTS_TYPES, INCOTERMS, NON_DELIVERY_OPTIONS, RESTRICTION_TYPES } from './options.js'

/** An edited declaration: the settings' fields and its items, whole. */
export type DeclarationInput = CustomsSettings & { items: CustomsItemInput[] }
export type CustomsItemInput = Omit<CustomsItemRow, 'lineItemId' | 'sku'> & { lineItemId?: number | null | undefined; sku?: string | null | undefined }

/** At most this many items on one declaration (EasyPost's customs items; a parcel's lines are bounded too). */
export const MAX_DECLARATION_ITEMS = 100
/** A declared value: digits with at most 6 decimals (exact, never a float). */
const VALUE = /^(?:0|[1-9]\d{0,11})(?:\.\d{1,6})?$/

type Problems = Record<string, string[]>
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** A text field: a string (trimmed; empty as null when `nullable`) within the text rule, or a problem. */
function text(problems: Problems, field: string, value: unknown, nullable: boolean, maxLength: number = TEXT_LIMITS.short): string | null {
  if (value === null || value === undefined || (typeof value === 'string' && value.trim() === '')) {
    if (!nullable) (problems[field] ??= []).push('is required')
    return null
  }
  if (typeof value !== 'string') {
    ;(problems[field] ??= []).push('must be a string')
    return null
  }
  const problem = textProblem(value, { maxLength })
  if (problem) (problems[field] ??= []).push(problem)
  return value.trim()
}

function oneOf<T extends string>(problems: Problems, field: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) (problems[field] ??= []).push(`must be one of ${allowed.join(', ')}`)
  return value as T
}

function settingsPart(input: Record<string, unknown>, problems: Problems): CustomsSettings {
  const unknown = Object.keys(input).filter((key) => !(SETTING_FIELDS as readonly string[]).includes(key) && key !== 'items')
  for (const key of unknown) (problems[key] ??= []).push('is not a field of the customs settings')
  if (typeof input.certify !== 'boolean') (problems.certify ??= []).push('must be true or false')
  const currency = typeof input.currency === 'string' ? input.currency.trim().toUpperCase() : ''
  if (!/^[A-Z]{3}$/.test(currency)) (problems.currency ??= []).push('must be an ISO 4217 code such as USD')
  return {
    contentsType: oneOf(problems, 'contentsType', input.contentsType, CONTENTS_TYPES),
    contentsExplanation: text(problems, 'contentsExplanation', input.contentsExplanation, true),
    nonDeliveryOption: oneOf(problems, 'nonDeliveryOption', input.nonDeliveryOption, NON_DELIVERY_OPTIONS),
    restrictionType: oneOf(problems, 'restrictionType', input.restrictionType, RESTRICTION_TYPES),
    restrictionComments: text(problems, 'restrictionComments', input.restrictionComments, true),
    signer: text(problems, 'signer', input.signer, true),
    certify: input.certify === true,
    incoterm: oneOf(problems, 'incoterm', input.incoterm, INCOTERMS),
    eelPfc: text(problems, 'eelPfc', input.eelPfc, true, 64),
    currency,
  }
}

/** The settings, whole: every field of its form, and what a declaration needs of them (an explanation for "other", a signer when certified). */
export function checkedSettings(input: unknown): CustomsSettings {
  if (!isRecord(input)) throw new ShipmentValidationError({ body: ['must be an object of the customs settings'] })
  const problems: Problems = {}
  if ('items' in input) (problems.items ??= []).push('is not a field of the customs settings')
  const settings = settingsPart(input, problems)
  if (Object.keys(problems).length === 0) Object.assign(problems, settingProblems(settings))
  if (Object.keys(problems).length > 0) throw new ShipmentValidationError(problems)
  return settings
}

function item(input: unknown, index: number, problems: Problems): CustomsItemRow {
  const at = `items[${index}]`
  if (!isRecord(input)) {
    ;(problems[at] ??= []).push('must be an object')
    return { lineItemId: null, description: '', quantity: 0, value: '0', weight: { value: '0', unit: 'g' }, tariffNumber: null, originCountry: null, sku: null }
  }
  const known = ['lineItemId', 'description', 'quantity', 'value', 'weight', 'tariffNumber', 'originCountry', 'sku']
  for (const key of Object.keys(input).filter((each) => !known.includes(each))) (problems[`${at}.${key}`] ??= []).push('is not a field of a customs item')
  const lineItemId = input.lineItemId ?? null
  if (lineItemId !== null && !(Number.isSafeInteger(lineItemId) && (lineItemId as number) > 0)) (problems[`${at}.lineItemId`] ??= []).push('must be the id of an order line, or null for a line added by hand')
  if (!Number.isSafeInteger(input.quantity) || (input.quantity as number) < 1 || (input.quantity as number) > 1_000_000) (problems[`${at}.quantity`] ??= []).push('must be a whole number of at least 1')
  const value = typeof input.value === 'string' ? input.value.trim() : ''
  if (!VALUE.test(value) || !isPlainDecimal(value)) (problems[`${at}.value`] ??= []).push('must be the line\'s total value as an exact decimal string such as "59.97" (a JSON number is refused)')
  const weight = isRecord(input.weight) ? input.weight : {}
  const weightProblem = decimalProblem(weight.value)
  if (weightProblem) (problems[`${at}.weight.value`] ??= []).push(weightProblem)
  if (!(WEIGHT_UNITS as readonly string[]).includes(weight.unit as string)) (problems[`${at}.weight.unit`] ??= []).push(`must be one of ${WEIGHT_UNITS.join(', ')}`)
  const originCountry = text(problems, `${at}.originCountry`, input.originCountry, true, 2)
  return {
    lineItemId: lineItemId as number | null,
    // A blank description is the declaration's problem (incomplete), not the form's.
    description: text(problems, `${at}.description`, input.description, true) ?? '',
    quantity: input.quantity as number,
    value,
    weight: { value: String(weight.value ?? ''), unit: weight.unit as WeightUnit },
    tariffNumber: text(problems, `${at}.tariffNumber`, input.tariffNumber, true, 13),
    originCountry: originCountry?.toUpperCase() ?? null,
    sku: text(problems, `${at}.sku`, input.sku, true),
  }
}

/** An edited declaration's form, whole (its completeness for the parcel is checked next, by the service). */
export function checkedDeclarationInput(input: unknown): Omit<DeclarationInput, 'items'> & { items: CustomsItemRow[] } {
  if (!isRecord(input)) throw new ShipmentValidationError({ body: ['must be an object: the declaration, whole'] })
  const problems: Problems = {}
  const settings = settingsPart(input, problems)
  const rawItems = Array.isArray(input.items) ? input.items : []
  if (!Array.isArray(input.items)) (problems.items ??= []).push('must be a list of the declaration\'s items')
  if (rawItems.length > MAX_DECLARATION_ITEMS) (problems.items ??= []).push(`at most ${MAX_DECLARATION_ITEMS} items`)
  const items = rawItems.slice(0, MAX_DECLARATION_ITEMS).map((each, index) => item(each, index, problems))
  if (Object.keys(problems).length > 0) throw new ShipmentValidationError(problems)
  return { ...settings, items }
}
