// The dry run in a store admin's words: for each parcel of a shipment, what the rules look at, each rule
// tried with its checks, the rule that matched (or the default, or nothing), and, when asked to rate,
// the offer the choice would take now or why none fits. Nothing is bought.
import type { RateQuote } from '../deliveries/service.js'
import { CustomsIncompleteError, ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import { matchRule, type ConditionCheck, type ParcelFacts, type ShippingRuleChoice, type ShippingRules } from './model.js'
import { countryName } from './validation.js'

export interface RuleTried {
  id: string
  name: string
  /** Its place in the list, from 1. */
  position: number
  enabled: boolean
  matched: boolean
  checks: ConditionCheck[]
  /** Why it matched or not, in words. */
  why: string
}

export interface ParcelExplanation {
  parcelId: number
  facts: ParcelFacts
  /** The facts in words. */
  factsText: string
  /** The rules tried, in order, up to the one that matched. */
  tried: RuleTried[]
  /** The rule that matched, or null (the default applies, or nothing). */
  rule: { id: string; name: string; position: number } | null
  usedDefault: boolean
  /** What the parcel would be bought with; null when no rule matches and there is no default. */
  choice: { integration: string; choice: ShippingRuleChoice; boxId: number | null } | null
  /** Whether the provider was asked for rates (`rate: true`). */
  rated: boolean
  /** The offer the choice takes among the rates asked now (a stored quote), when rated and one fits. */
  offer: RateQuote | null
  /** Why nothing would be bought: no rule and no default, no offer fits the choice, or the carrier refused to rate. */
  refused: string | null
  /** Which rule and why, and what it would buy, in a sentence or two. */
  summary: string
}

export interface ShipmentExplanation {
  shipmentId: number
  rated: boolean
  parcels: ParcelExplanation[]
}

/** Rates a parcel for a choice: the offer it takes, or why none fits. */
export type RateChoice = (shipmentId: number, parcelId: number, integration: string, choice: ShippingRuleChoice) => Promise<{ offer: RateQuote } | { refused: string }>

/** A choice in words: "the cheapest offer of easypost". */
export function choiceWords(choice: ShippingRuleChoice, integration: string): string {
  const through = `through "${integration}"`
  switch (choice.kind) {
    case 'cheapest':
      return `the cheapest offer ${through}`
    case 'cheapestWithin':
      return `the cheapest offer ${through} that arrives within ${choice.days} day${choice.days === 1 ? '' : 's'}`
    case 'fastest':
      return `the fastest offer ${through} (the cheapest of the fastest)`
    case 'service':
      return `${choice.carrier} ${choice.service} ${through}, as named`
  }
}

export function factsWords(facts: ParcelFacts): string {
  const country = facts.country ? `${facts.country}${countryName(facts.country) ? ` (${countryName(facts.country)})` : ''}` : 'no known country'
  const attributes = Object.entries(facts.orderAttributes).map(([name, value]) => `${name} ${value === null ? 'not set' : `"${value}"`}`)
  return `Ships to ${country}; weighs ${facts.weight ? `${facts.weight.value} ${facts.weight.unit}` : 'nothing known'}; the shipment has ${facts.parcelCount} parcel${facts.parcelCount === 1 ? '' : 's'}; order attributes: ${attributes.length > 0 ? attributes.join(', ') : 'none'}.`
}

function whyOf(enabled: boolean, matched: boolean, checks: ConditionCheck[]): string {
  if (!enabled) return 'Skipped: the rule is disabled.'
  if (checks.length === 0) return 'Matches: it has no conditions, so it matches every parcel.'
  const held = checks.filter((check) => check.held)
  const failed = checks.filter((check) => !check.held)
  if (matched) return `Matches: ${held.map((check) => check.why).join('; ')}.`
  return `Does not match: ${failed.map((check) => check.why).join('; ')}${held.length > 0 ? ` (holds: ${held.map((check) => check.why).join('; ')})` : ''}.`
}

const offerWords = (offer: RateQuote) =>
  `${offer.carrier} ${offer.service} at ${offer.amount} ${offer.currency}${offer.deliveryDays !== null ? `, ${offer.deliveryDays} day${offer.deliveryDays === 1 ? '' : 's'}` : ''} (quote ${offer.id})`

/** The explanation of every parcel; `rate` (or null: no rating) asks the provider for each parcel with a choice. */
export async function explainShipment(
  shipmentId: number,
  rules: ShippingRules,
  parcels: ReadonlyArray<{ parcelId: number; facts: ParcelFacts }>,
  rate: RateChoice | null,
): Promise<ShipmentExplanation> {
  const explained: ParcelExplanation[] = []
  // One parcel after another: rating asks the carrier, and a shipment's parcels are few.
  for (const { parcelId, facts } of parcels) {
    const match = matchRule(rules, facts)
    const tried = match.tried.map((entry, index): RuleTried => {
      const enabled = rules.rules[index]?.enabled !== false
      return { ...entry, position: index + 1, enabled, why: whyOf(enabled, entry.matched, entry.checks) }
    })
    const position = match.rule ? rules.rules.indexOf(match.rule) + 1 : 0
    const rule = match.rule ? { id: match.rule.id, name: match.rule.name, position } : null
    let summary: string
    if (rule && match.choice) summary = `Rule ${rule.position} "${rule.name}" matches, so it would buy ${choiceWords(match.choice.choice, match.choice.integration)}.`
    else if (match.choice) summary = `${rules.rules.length === 0 ? 'There are no rules' : 'No rule matches'}, so the default applies: it would buy ${choiceWords(match.choice.choice, match.choice.integration)}.`
    else summary = `${rules.rules.length === 0 ? 'There are no rules' : 'No rule matches'} and there is no default: nothing would be bought.`
    let offer: RateQuote | null = null
    let refused: string | null = match.choice ? null : 'No shipping rule matches this parcel and there is no default.'
    if (rate && match.choice) {
      const { integration, choice } = match.choice
      try {
        const chosen = await rate(shipmentId, parcelId, integration, choice)
        if ('offer' in chosen) offer = chosen.offer
        else refused = `${chosen.refused[0]!.toUpperCase()}${chosen.refused.slice(1)}.`
      } catch (error) {
        // The carrier's refusal, or what rating needs and lacks (a ship-from address): this parcel's answer, not the run's.
        // An incomplete customs declaration: its message names each line and field.
        if (error instanceof ShipmentUpdateRejectedError || error instanceof CustomsIncompleteError) refused = error.message
        else if (error instanceof ShipmentValidationError) refused = Object.values(error.errors).flat().join(' ')
        else throw error
      }
      summary += offer ? ` With the rates asked now, that is ${offerWords(offer)}.` : ` With the rates asked now, nothing fits: ${refused}`
    }
    explained.push({ parcelId, facts, factsText: factsWords(facts), tried, rule, usedDefault: !rule && match.choice !== null, choice: match.choice, rated: rate !== null && match.choice !== null, offer, refused, summary })
  }
  return { shipmentId, rated: rate !== null, parcels: explained }
}
