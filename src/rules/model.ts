// Shipping rules: an ordered list that chooses how a parcel ships without asking. Each rule has
// conditions (all must hold; an absent one always does) and a choice; the first enabled rule whose
// conditions hold wins, and the default choice applies when none does. Pure: what a parcel is
// (its facts) in, which rule and why out; the rates a choice needs are asked by the caller.
import type { RateOffer } from '../gateway/delivery-provider.js'
import { compareDecimals } from '../deliveries/rates.js'
import { toMilligrams, type WeightUnit } from '../model/units.js'

/**
 * How a rule chooses among the provider's offers:
 * - cheapest: the lowest amount;
 * - cheapestWithin: the lowest amount among offers that say they arrive within `days` days;
 * - fastest: the fewest delivery days (offers that give none come last), the cheapest of a tie;
 * - service: the named carrier and service, whatever it costs (bought as named, without asking for rates).
 * Ties keep the provider's order.
 */
export type ShippingRuleChoice =
  | { kind: 'cheapest' }
  | { kind: 'cheapestWithin'; days: number }
  | { kind: 'fastest' }
  | { kind: 'service'; carrier: string; service: string }

export interface ShippingRuleConditions {
  /** Destination countries (ISO 3166-1 alpha-2); absent or empty: any. */
  countries?: string[] | undefined
  /** The parcel's weight: at least `min` and below `max` (either may be absent), in `unit`. */
  weight?: { min?: string | undefined; max?: string | undefined; unit: WeightUnit } | undefined
  /** The number of parcels of the shipment: at least `min`, at most `max`. */
  parcelCount?: { min?: number | undefined; max?: number | undefined } | undefined
  /** An attribute of the order the host supplies (`OrderSummary.attributes`), equal to one of `values`. */
  orderAttribute?: { name: string; values: string[] } | undefined
}

export interface ShippingRule {
  /** Stable across edits, so a batch and a dry run can say which rule chose. */
  id: string
  name: string
  enabled: boolean
  /** The delivery integration (its handle) whose provider rates and buys. */
  integration: string
  conditions: ShippingRuleConditions
  choice: ShippingRuleChoice
  /** A box of the catalogue to pack in first, when parcels are suggested for a shipment without any. */
  boxId?: number | null | undefined
}

/** The default that applies when no rule matches: a choice and its integration, or none (nothing is bought). */
export interface ShippingRuleDefault {
  integration: string
  choice: ShippingRuleChoice
  boxId?: number | null | undefined
}

export interface ShippingRules {
  rules: ShippingRule[]
  fallback: ShippingRuleDefault | null
}

/** What a rule's conditions look at: the parcel, its shipment and its order. */
export interface ParcelFacts {
  country: string | null
  weight: { value: string; unit: WeightUnit } | null
  parcelCount: number
  orderAttributes: Readonly<Record<string, string | null>>
}

/** Why a condition held or did not, in a store admin's words. */
export interface ConditionCheck {
  condition: 'countries' | 'weight' | 'parcelCount' | 'orderAttribute'
  held: boolean
  why: string
}

/** The first enabled rule whose conditions hold (or the default), with the checks of every rule tried. */
export interface RuleMatch {
  /** The rule that matched, or null for the default (or nothing). */
  rule: ShippingRule | null
  /** What to buy with: null when no rule matched and there is no default. */
  choice: { integration: string; choice: ShippingRuleChoice; boxId: number | null } | null
  /** Each rule tried, in order, with its conditions' checks (disabled rules say so). */
  tried: Array<{ id: string; name: string; matched: boolean; checks: ConditionCheck[] }>
}

function checkConditions(conditions: ShippingRuleConditions, facts: ParcelFacts): ConditionCheck[] {
  const checks: ConditionCheck[] = []
  const { countries, weight, parcelCount, orderAttribute } = conditions
  if (countries && countries.length > 0) {
    const held = facts.country !== null && countries.includes(facts.country)
    checks.push({ condition: 'countries', held, why: `ships to ${facts.country ?? 'no known country'}, ${held ? 'one of' : 'not one of'} ${countries.join(', ')}` })
  }
  if (weight && (weight.min !== undefined || weight.max !== undefined)) {
    let held = facts.weight !== null
    if (facts.weight) {
      const parcel = toMilligrams(facts.weight.value, facts.weight.unit)
      if (weight.min !== undefined && parcel < toMilligrams(weight.min, weight.unit)) held = false
      if (weight.max !== undefined && parcel >= toMilligrams(weight.max, weight.unit)) held = false
    }
    const range = `${weight.min ?? '0'}${weight.max !== undefined ? ` to below ${weight.max}` : ' or more'} ${weight.unit}`
    checks.push({ condition: 'weight', held, why: `weighs ${facts.weight ? `${facts.weight.value} ${facts.weight.unit}` : 'nothing known'}, ${held ? 'within' : 'outside'} ${range}` })
  }
  if (parcelCount && (parcelCount.min !== undefined || parcelCount.max !== undefined)) {
    const held = (parcelCount.min === undefined || facts.parcelCount >= parcelCount.min) && (parcelCount.max === undefined || facts.parcelCount <= parcelCount.max)
    const range = parcelCount.max === undefined ? `${parcelCount.min} or more` : `${parcelCount.min ?? 1} to ${parcelCount.max}`
    checks.push({ condition: 'parcelCount', held, why: `the shipment has ${facts.parcelCount} parcel${facts.parcelCount === 1 ? '' : 's'}, ${held ? 'within' : 'outside'} ${range}` })
  }
  if (orderAttribute) {
    const value = Object.hasOwn(facts.orderAttributes, orderAttribute.name) ? facts.orderAttributes[orderAttribute.name] ?? null : null
    const held = value !== null && orderAttribute.values.includes(value)
    checks.push({ condition: 'orderAttribute', held, why: `the order's ${orderAttribute.name} is ${value === null ? 'not set' : `"${value}"`}, ${held ? 'one of' : 'not one of'} ${orderAttribute.values.map((each) => `"${each}"`).join(', ')}` })
  }
  return checks
}

/** The rule that chooses for a parcel with these facts: the first enabled one whose conditions all hold, else the default. */
export function matchRule(rules: ShippingRules, facts: ParcelFacts): RuleMatch {
  const tried: RuleMatch['tried'] = []
  for (const rule of rules.rules) {
    if (!rule.enabled) {
      tried.push({ id: rule.id, name: rule.name, matched: false, checks: [] })
      continue
    }
    const checks = checkConditions(rule.conditions, facts)
    const matched = checks.every((check) => check.held)
    tried.push({ id: rule.id, name: rule.name, matched, checks })
    if (matched) return { rule, choice: { integration: rule.integration, choice: rule.choice, boxId: rule.boxId ?? null }, tried }
  }
  const fallback = rules.fallback
  return { rule: null, choice: fallback ? { integration: fallback.integration, choice: fallback.choice, boxId: fallback.boxId ?? null } : null, tried }
}

/** The offer a choice takes among a parcel's offers, or why none fits (a `service` choice: the named offer, when a dry run rated). */
export function chooseOffer<Offer extends Pick<RateOffer, 'carrier' | 'service' | 'amount' | 'currency' | 'deliveryDays'>>(
  choice: ShippingRuleChoice,
  offers: readonly Offer[],
): { offer: Offer } | { refused: string } {
  if (choice.kind === 'service') {
    const named = offers.find((offer) => offer.carrier === choice.carrier && offer.service === choice.service)
    return named ? { offer: named } : { refused: `the carrier offered no ${choice.carrier} ${choice.service} for this parcel` }
  }
  const candidates = choice.kind === 'cheapestWithin' ? offers.filter((offer) => offer.deliveryDays !== null && offer.deliveryDays <= choice.days) : [...offers]
  if (candidates.length === 0) {
    return { refused: offers.length === 0 ? 'the carrier offered no rate for this parcel' : `no offer arrives within ${(choice as { days: number }).days} days` }
  }
  // One currency only: amounts in different currencies are not compared (the first offer's currency wins).
  const currency = candidates[0]!.currency
  const comparable = candidates.filter((offer) => offer.currency === currency)
  const byAmount = (a: Offer, b: Offer) => compareDecimals(a.amount, b.amount)
  const byDays = (a: Offer, b: Offer) => (a.deliveryDays ?? Number.MAX_SAFE_INTEGER) - (b.deliveryDays ?? Number.MAX_SAFE_INTEGER)
  const sorted = comparable.sort(choice.kind === 'fastest' ? (a, b) => byDays(a, b) || byAmount(a, b) : byAmount)
  return { offer: sorted[0]! }
}
