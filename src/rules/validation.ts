// The shipping rules as a store admin or a host sends them, checked whole before anything is written:
// each problem is named by its field (`rules.<index>.<field>`, `fallback.<field>`) and, in its message, by
// the rule's position (from 1) and name. The checks that need the database or a provider (integrations,
// boxes, the carriers' services) run once the shapes hold, one provider call per integration.
import { randomBytes } from 'node:crypto'
import { RuleErrors, ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import type { CarrierService } from '../gateway/delivery-provider.js'
import { compareDecimals } from '../deliveries/rates.js'
import type { DeliveryProviderAt } from '../deliveries/label-port.js'
import { decimalProblem, toMilligrams, WEIGHT_UNITS, type WeightUnit } from '../model/units.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import type { ShippingRule, ShippingRuleChoice, ShippingRuleConditions, ShippingRuleDefault, ShippingRules } from './model.js'

/** What `rules.replace` takes: the whole ordered list and the default. A rule sent without an id gets one. */
export interface ShippingRulesInput {
  rules: ShippingRuleInput[]
  fallback: ShippingRuleDefault | null
}
export type ShippingRuleInput = Omit<ShippingRule, 'id' | 'enabled' | 'conditions'> & { id?: string | undefined; enabled?: boolean | undefined; conditions?: ShippingRuleConditions | undefined }

export const RULE_LIMITS = { rules: 200, name: 100, countries: 300, attributeValues: 100, days: 365, parcels: 1_000 } as const
const RULE_ID = /^[A-Za-z0-9_-]{1,64}$/
const ATTRIBUTE_NAME = /^[A-Za-z0-9_.-]{1,64}$/
const CHOICE_KINDS = ['cheapest', 'cheapestWithin', 'fastest', 'service'] as const

export interface RuleCheckDependencies {
  /** The label port's lookup: an integration that exists, is enabled and sells labels (else a validation error). */
  deliveryProvider: (handle: unknown, field?: string) => Promise<DeliveryProviderAt>
  boxExists: (boxId: number) => Promise<boolean>
}

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' })
/** An ISO 3166-1 alpha-2 code the runtime's region data knows (an unknown one comes back unchanged). */
export function countryName(code: string): string | null {
  if (!/^[A-Z]{2}$/.test(code)) return null
  const name = regionNames.of(code)
  return name && name !== code && name !== 'Unknown Region' ? name : null
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
const isWholeNumber = (value: unknown, min: number, max: number): value is number => typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max

/** Where a rule's problems are filed and how its messages name it. */
interface Place {
  key: string
  label: string
}

/** Collects problems by field; each message starts with the rule it belongs to. */
class Problems {
  readonly errors: Record<string, string[]> = {}
  add(place: Place, field: string, message: string): void {
    ;(this.errors[field ? `${place.key}.${field}` : place.key] ??= []).push(field ? `${place.label}, ${field}: ${message}` : `${place.label}: ${message}`)
  }
  get any(): boolean {
    return Object.keys(this.errors).length > 0
  }
}

/** Refuses the keys of `raw` that are not `allowed`: a misspelt condition must not become "any parcel". */
function refuseUnknownKeys(raw: Record<string, unknown>, allowed: readonly string[], place: Place, field: string, problems: Problems): void {
  for (const key of Object.keys(raw)) if (!allowed.includes(key)) problems.add(place, field ? `${field}.${key}` : key, `is not a field here (${allowed.join(', ')})`)
}

function readText(value: unknown, place: Place, field: string, problems: Problems, maxLength: number = TEXT_LIMITS.short): string | null {
  if (typeof value !== 'string' || value.trim() === '') {
    problems.add(place, field, 'is required (text)')
    return null
  }
  const problem = textProblem(value, { maxLength })
  if (problem) {
    problems.add(place, field, problem)
    return null
  }
  return value.trim()
}

function readConditions(raw: unknown, place: Place, problems: Problems): ShippingRuleConditions {
  if (raw === undefined || raw === null) return {}
  if (!isRecord(raw)) {
    problems.add(place, 'conditions', 'must be an object')
    return {}
  }
  const conditions: ShippingRuleConditions = {}
  refuseUnknownKeys(raw, ['countries', 'weight', 'parcelCount', 'orderAttribute'], place, 'conditions', problems)
  const { countries, weight, parcelCount, orderAttribute } = raw
  if (countries !== undefined && countries !== null) {
    if (!Array.isArray(countries) || countries.length > RULE_LIMITS.countries) problems.add(place, 'conditions.countries', `must be a list of at most ${RULE_LIMITS.countries} country codes`)
    else {
      const codes = countries.map((code) => (typeof code === 'string' ? code.trim().toUpperCase() : ''))
      const unknown = countries.filter((_, index) => countryName(codes[index]!) === null)
      if (unknown.length > 0) problems.add(place, 'conditions.countries', `must hold ISO 3166-1 alpha-2 country codes, such as US or DE: ${unknown.map((code) => JSON.stringify(code)).join(', ')} ${unknown.length === 1 ? 'is not one' : 'are not'}`)
      else if (codes.length > 0) conditions.countries = [...new Set(codes)]
    }
  }
  if (weight !== undefined && weight !== null) conditions.weight = readWeight(weight, place, problems)
  if (parcelCount !== undefined && parcelCount !== null) conditions.parcelCount = readParcelCount(parcelCount, place, problems)
  if (orderAttribute !== undefined && orderAttribute !== null) conditions.orderAttribute = readOrderAttribute(orderAttribute, place, problems)
  return conditions
}

function readWeight(raw: unknown, place: Place, problems: Problems): ShippingRuleConditions['weight'] {
  if (!isRecord(raw)) {
    problems.add(place, 'conditions.weight', 'must be an object: {min?, max?, unit}')
    return undefined
  }
  refuseUnknownKeys(raw, ['min', 'max', 'unit'], place, 'conditions.weight', problems)
  const unit = raw.unit
  if (!(WEIGHT_UNITS as readonly unknown[]).includes(unit)) problems.add(place, 'conditions.weight.unit', `must be one of: ${WEIGHT_UNITS.join(', ')}`)
  const bound = (name: 'min' | 'max') => {
    const value = raw[name]
    if (value === undefined || value === null || value === '') return undefined
    const problem = decimalProblem(value)
    if (problem) problems.add(place, `conditions.weight.${name}`, problem)
    return problem ? null : (value as string)
  }
  const min = bound('min')
  const max = bound('max')
  if (min === undefined && max === undefined) problems.add(place, 'conditions.weight', 'needs a min, a max or both')
  if (typeof min === 'string' && typeof max === 'string' && compareDecimals(min, max) >= 0) problems.add(place, 'conditions.weight.max', `must be above the min (${min}): a parcel weighs at least min and below max`)
  if (min === null || max === null || !(WEIGHT_UNITS as readonly unknown[]).includes(unit)) return undefined
  // Weights far beyond any parcel would overflow the milligram arithmetic the match uses.
  if ([min, max].some((value) => value !== undefined && toMilligrams(value, unit as WeightUnit) > Number.MAX_SAFE_INTEGER)) return undefined
  return { ...(min !== undefined && { min }), ...(max !== undefined && { max }), unit: unit as WeightUnit }
}

function readParcelCount(raw: unknown, place: Place, problems: Problems): ShippingRuleConditions['parcelCount'] {
  if (!isRecord(raw)) {
    problems.add(place, 'conditions.parcelCount', 'must be an object: {min?, max?}')
    return undefined
  }
  refuseUnknownKeys(raw, ['min', 'max'], place, 'conditions.parcelCount', problems)
  const bound = (name: 'min' | 'max') => {
    const value = raw[name]
    if (value === undefined || value === null) return undefined
    if (!isWholeNumber(value, 1, RULE_LIMITS.parcels)) {
      problems.add(place, `conditions.parcelCount.${name}`, `must be a whole number from 1 to ${RULE_LIMITS.parcels}`)
      return null
    }
    return value
  }
  const min = bound('min')
  const max = bound('max')
  if (min === undefined && max === undefined) problems.add(place, 'conditions.parcelCount', 'needs a min, a max or both')
  if (typeof min === 'number' && typeof max === 'number' && min > max) problems.add(place, 'conditions.parcelCount.max', `must be at least the min (${min})`)
  if (min === null || max === null) return undefined
  return { ...(min !== undefined && { min }), ...(max !== undefined && { max }) }
}

function readOrderAttribute(raw: unknown, place: Place, problems: Problems): ShippingRuleConditions['orderAttribute'] {
  if (!isRecord(raw)) {
    problems.add(place, 'conditions.orderAttribute', 'must be an object: {name, values}')
    return undefined
  }
  refuseUnknownKeys(raw, ['name', 'values'], place, 'conditions.orderAttribute', problems)
  const name = typeof raw.name === 'string' ? raw.name.trim() : ''
  if (!ATTRIBUTE_NAME.test(name)) problems.add(place, 'conditions.orderAttribute.name', 'must name an order attribute (letters, digits, _ . -), such as shippingMethod')
  const values = raw.values
  if (!Array.isArray(values) || values.length === 0 || values.length > RULE_LIMITS.attributeValues) {
    problems.add(place, 'conditions.orderAttribute.values', `must be a list of 1 to ${RULE_LIMITS.attributeValues} values`)
    return undefined
  }
  const bad = values.filter((value) => typeof value !== 'string' || value === '' || textProblem(value, { maxLength: TEXT_LIMITS.short }) !== null)
  if (bad.length > 0) problems.add(place, 'conditions.orderAttribute.values', `must each be a non-empty text of at most ${TEXT_LIMITS.short} characters`)
  if (bad.length > 0 || !ATTRIBUTE_NAME.test(name)) return undefined
  return { name, values: [...new Set(values as string[])] }
}

function readChoice(raw: unknown, place: Place, problems: Problems): ShippingRuleChoice | null {
  if (!isRecord(raw) || !(CHOICE_KINDS as readonly unknown[]).includes(raw.kind)) {
    problems.add(place, 'choice.kind', `must be one of: ${CHOICE_KINDS.join(', ')}`)
    return null
  }
  refuseUnknownKeys(raw, raw.kind === 'cheapestWithin' ? ['kind', 'days'] : raw.kind === 'service' ? ['kind', 'carrier', 'service'] : ['kind'], place, 'choice', problems)
  if (raw.kind === 'cheapest' || raw.kind === 'fastest') return { kind: raw.kind }
  if (raw.kind === 'cheapestWithin') {
    if (!isWholeNumber(raw.days, 1, RULE_LIMITS.days)) {
      problems.add(place, 'choice.days', `must be a positive whole number of days (at most ${RULE_LIMITS.days})`)
      return null
    }
    return { kind: 'cheapestWithin', days: raw.days }
  }
  const carrier = readText(raw.carrier, place, 'choice.carrier', problems)
  const service = readText(raw.service, place, 'choice.service', problems)
  return carrier && service ? { kind: 'service', carrier, service } : null
}

function readBoxId(raw: unknown, place: Place, problems: Problems): number | null {
  if (raw === undefined || raw === null) return null
  if (!isWholeNumber(raw, 1, 2_147_483_647)) {
    problems.add(place, 'boxId', 'must be the id of a box of the catalogue, or null')
    return null
  }
  return raw
}

/** A rule's or the default's shape; what needs a lookup is checked afterwards. */
interface ReadEntry {
  place: Place
  integration: string | null
  choice: ShippingRuleChoice | null
  boxId: number | null
}

/** The rules' shapes, ids given where absent; throws 422 with every problem. */
function readShapes(input: unknown, problems: Problems): { rules: ShippingRule[]; fallback: ShippingRuleDefault | null; entries: ReadEntry[] } {
  const whole: Place = { key: 'body', label: 'The rules' }
  if (!isRecord(input) || !Array.isArray(input.rules) || input.rules.length > RULE_LIMITS.rules) {
    problems.add({ key: 'rules', label: 'The rules' }, '', `must be a list of at most ${RULE_LIMITS.rules} rules`)
    throw new ShipmentValidationError(problems.errors)
  }
  refuseUnknownKeys(input, ['rules', 'fallback'], whole, '', problems)
  const entries: ReadEntry[] = []
  const ids = new Map<string, number>()
  const rules = input.rules.map((raw: unknown, index): ShippingRule => {
    const rule = isRecord(raw) ? raw : {}
    const named = typeof rule.name === 'string' && rule.name.trim() !== '' ? ` "${rule.name.trim().slice(0, RULE_LIMITS.name)}"` : ''
    const place = { key: `rules.${index}`, label: `Rule ${index + 1}${named}` }
    if (!isRecord(raw)) problems.add(place, '', 'must be an object')
    refuseUnknownKeys(rule, ['id', 'name', 'enabled', 'integration', 'conditions', 'choice', 'boxId'], place, '', problems)
    let id = rule.id
    if (id === undefined || id === null || id === '') id = `rule_${randomBytes(6).toString('hex')}`
    else if (typeof id !== 'string' || !RULE_ID.test(id)) problems.add(place, 'id', 'must be 1 to 64 letters, digits, _ or -')
    else if (ids.has(id)) problems.add(place, 'id', `is the id of rule ${ids.get(id)! + 1} too: ids are unique`)
    if (typeof id === 'string') ids.set(id, ids.get(id) ?? index)
    const name = readText(rule.name, place, 'name', problems, RULE_LIMITS.name)
    if (rule.enabled !== undefined && typeof rule.enabled !== 'boolean') problems.add(place, 'enabled', 'must be true or false')
    const integration = readText(rule.integration, place, 'integration', problems)
    const conditions = readConditions(rule.conditions, place, problems)
    const choice = readChoice(rule.choice, place, problems)
    const boxId = readBoxId(rule.boxId, place, problems)
    entries.push({ place, integration, choice, boxId })
    return { id: String(id), name: name ?? '', enabled: rule.enabled !== false, integration: integration ?? '', conditions, choice: choice ?? { kind: 'cheapest' }, boxId }
  })
  let fallback: ShippingRuleDefault | null = null
  // Required, null for none: the list is replaced whole, and a client that left it out would clear the default unawares.
  if (input.fallback === undefined) problems.add({ key: 'fallback', label: 'The default' }, '', 'must be sent (null for none)')
  else if (input.fallback !== null) {
    const place = { key: 'fallback', label: 'The default' }
    const raw = isRecord(input.fallback) ? input.fallback : {}
    if (!isRecord(input.fallback)) problems.add(place, '', 'must be an object, or null for none')
    refuseUnknownKeys(raw, ['integration', 'choice', 'boxId'], place, '', problems)
    const integration = readText(raw.integration, place, 'integration', problems)
    const choice = readChoice(raw.choice, place, problems)
    const boxId = readBoxId(raw.boxId, place, problems)
    entries.push({ place, integration, choice, boxId })
    fallback = { integration: integration ?? '', choice: choice ?? { kind: 'cheapest' }, boxId }
  }
  return { rules, fallback, entries }
}

/** The services an integration's provider lists, each item checked on its own; null when it cannot list them. */
async function listedServices(at: DeliveryProviderAt, handle: string): Promise<CarrierService[] | null> {
  const list = at.provider.deliveries.services
  if (!list) return null
  let answer: unknown
  try {
    answer = await list.call(at.provider.deliveries, at.context)
  } catch (error) {
    // The provider's own words (a DeliveryProviderError's message): 429, 5xx, no answer, an odd answer.
    throw new RuleErrors.ServicesUnavailable(handle, error instanceof Error ? error.message : String(error))
  }
  if (!Array.isArray(answer)) throw new RuleErrors.ServicesUnavailable(handle, 'the provider answered something other than a list')
  const valid = (value: unknown) => typeof value === 'string' && value.trim() !== '' && textProblem(value, { maxLength: TEXT_LIMITS.short }) === null
  return answer.flatMap((item: unknown) => (isRecord(item) && valid(item.carrier) && valid(item.service) ? [{ carrier: String(item.carrier).trim(), service: String(item.service).trim() }] : []))
}

const same = (a: string, b: string) => a.trim().toLowerCase() === b.trim().toLowerCase()

/**
 * The rules to store, from what was sent: every shape, integration, box and named service checked
 * before anything is written. A named carrier and service take the provider's spelling. Throws
 * ShipmentValidationError (422) naming each problem, or RuleErrors.ServicesUnavailable (502).
 */
export async function checkedRules(input: unknown, deps: RuleCheckDependencies): Promise<ShippingRules> {
  const problems = new Problems()
  const { rules, fallback, entries } = readShapes(input, problems)

  const providers = new Map<string, DeliveryProviderAt | string>()
  for (const handle of new Set(entries.flatMap((entry) => (entry.integration ? [entry.integration] : [])))) {
    try {
      providers.set(handle, await deps.deliveryProvider(handle))
    } catch (error) {
      if (error instanceof ShipmentValidationError) providers.set(handle, Object.values(error.errors).flat()[0] ?? `"${handle}" is not an integration that sells labels`)
      else if (error instanceof ShipmentUpdateRejectedError) providers.set(handle, error.message)
      else throw error
    }
  }
  const boxes = new Map<number, boolean>()
  for (const boxId of new Set(entries.flatMap((entry) => (entry.boxId !== null ? [entry.boxId] : [])))) boxes.set(boxId, await deps.boxExists(boxId))
  const services = new Map<string, CarrierService[] | null>()
  for (const entry of entries) {
    const at = entry.integration ? providers.get(entry.integration) : undefined
    if (typeof at === 'string') problems.add(entry.place, 'integration', at)
    if (entry.boxId !== null && boxes.get(entry.boxId) === false) problems.add(entry.place, 'boxId', `names no box of the catalogue (box ${entry.boxId})`)
    if (entry.choice?.kind !== 'service' || !at || typeof at === 'string') continue
    if (!services.has(entry.integration!)) services.set(entry.integration!, await listedServices(at, entry.integration!))
    const offered = services.get(entry.integration!)
    if (!offered) continue
    const choice = entry.choice
    const exact = offered.find((each) => same(each.carrier, choice.carrier) && (each.service === '*' || same(each.service, choice.service)))
    if (exact) {
      // Stored as the provider spells it, so rates and purchases find it.
      choice.carrier = exact.carrier
      if (exact.service !== '*') choice.service = exact.service
      continue
    }
    const list = offered.length === 0 ? 'none' : offered.map((each) => (each.service === '*' ? `${each.carrier} (any service)` : `${each.carrier} ${each.service}`)).join(', ')
    const carrierKnown = offered.some((each) => same(each.carrier, choice.carrier))
    problems.add(entry.place, 'choice.service', `${choice.carrier} ${choice.service} is not offered by the integration "${entry.integration}"${carrierKnown ? '' : ` (no ${choice.carrier} account)`}; it offers: ${list}`)
  }
  if (problems.any) throw new ShipmentValidationError(problems.errors)
  return { rules, fallback }
}
