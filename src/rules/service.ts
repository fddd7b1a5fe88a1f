// The shipping rules as the package keeps them (one setting: the ordered list and the default, replaced
// whole, so its order is never half-saved), a parcel's facts, and the decision for a parcel: which rule,
// why, and what to buy (a stored quote the rule's choice took, or a named carrier and service). Saving
// checks the whole list first (validation.ts); the dry run (explain.ts) says which rule and why.
import type { DataLayer } from '../db/data-layer.js'
import type { DeliveryService, LabelPort, RateQuote } from '../deliveries/service.js'
import { ShipmentsErrors } from '../errors.js'
import type { OrderStore } from '../order-store.js'
import type { ShipmentService } from '../shipments/service.js'
import { formatIsoWithOffset } from '../time.js'
import { chooseOffer, matchRule, type ParcelFacts, type RuleMatch, type ShippingRuleChoice, type ShippingRules } from './model.js'
import { checkedRules, type ShippingRulesInput } from './validation.js'
import { explainShipment, type ShipmentExplanation } from './explain.js'

export const SHIPPING_RULES_STATE_KEY = 'rules.shippingRules'

const NO_RULES: ShippingRules = { rules: [], fallback: null }

export interface ShippingRulesDependencies {
  data: DataLayer
  deliveries: Pick<DeliveryService, 'listParcels' | 'quoteRates'>
  shipments: Pick<ShipmentService, 'get'>
  orderStore: Pick<OrderStore, 'findOrder'>
  /** The label port's integration lookup: saving checks each rule's integration (and its services) with it. */
  labels?: Pick<LabelPort, 'deliveryProvider'> | undefined
  /** The plugin's clock and timezone, for when the rules were saved. */
  clock?: (() => number) | undefined
  timeZone?: string | undefined
}

/** The stored rules with who saved them last and when (null for rules never saved). */
export interface SavedShippingRules extends ShippingRules {
  savedAt: string | null
  savedBy: string | null
}

/**
 * What the rules decided for a parcel. `buy`: what to buy with (a stored quote, or a carrier and
 * service named by the rule); `none`: nothing to buy, with the reason in a store admin's words (no rule
 * matched and there is no default, or no offer fits the rule's choice).
 */
export type ParcelDecision =
  | { parcelId: number; facts: ParcelFacts; match: RuleMatch; outcome: 'buy'; integration: string; quote: RateQuote | null; carrier: string; service: string }
  | { parcelId: number; facts: ParcelFacts; match: RuleMatch; outcome: 'none'; reason: string }

export function createShippingRules(deps: ShippingRulesDependencies) {
  /** The stored rules with who saved them and when. */
  async function saved(): Promise<SavedShippingRules> {
    const stored = await deps.data.packageState(SHIPPING_RULES_STATE_KEY)
    if (!stored) return { ...NO_RULES, savedAt: null, savedBy: null }
    const { rules, fallback, savedAt, savedBy } = JSON.parse(stored) as Partial<SavedShippingRules>
    return { rules: rules ?? [], fallback: fallback ?? null, savedAt: savedAt ?? null, savedBy: savedBy ?? null }
  }

  /** The stored rules, or none. */
  async function current(): Promise<ShippingRules> {
    const { rules, fallback } = await saved()
    return { rules, fallback }
  }

  /**
   * Replaces the whole ordered list and the default in one write, once every rule is checked: ids
   * unique (one is made for a rule sent without), countries, weights, parcel counts, attributes, days,
   * integrations that sell labels, boxes of the catalogue, and a named carrier and service against
   * the provider's list where it gives one. A refusal (422 by field) writes nothing.
   */
  async function replace(input: ShippingRulesInput, context: { userId?: string | null | undefined } = {}): Promise<SavedShippingRules> {
    const labels = deps.labels
    if (!labels) throw new Error('The shipping rules were made without the label port: they cannot be checked, so they are not saved.')
    const checked = await checkedRules(input, {
      deliveryProvider: (handle, field) => labels.deliveryProvider(handle, field),
      boxExists: async (boxId) => (await deps.data.parcels.findBox(boxId)) !== undefined,
    })
    const record: SavedShippingRules = { ...checked, savedAt: formatIsoWithOffset((deps.clock ?? Date.now)(), deps.timeZone ?? 'UTC'), savedBy: context.userId ?? null }
    await deps.data.setPackageState(SHIPPING_RULES_STATE_KEY, JSON.stringify(record))
    return record
  }

  /** Each parcel of the shipment with what its rules look at. */
  async function parcelFacts(shipmentId: number): Promise<Array<{ parcelId: number; facts: ParcelFacts }>> {
    const shipment = await deps.shipments.get(shipmentId)
    if (!shipment) throw new ShipmentsErrors.ShipmentNotFound(shipmentId)
    const [order, parcels] = await Promise.all([deps.orderStore.findOrder(shipment.orderId), deps.deliveries.listParcels(shipmentId)])
    const orderAttributes = order?.attributes ?? {}
    return parcels.map((parcel) => ({
      parcelId: parcel.id,
      facts: {
        country: order?.shippingAddress?.country ?? null,
        weight: { value: parcel.weight.value, unit: parcel.weight.unit },
        parcelCount: parcels.length,
        orderAttributes,
      },
    }))
  }

  /**
   * The decision for one parcel: the rule that matches it and, for a choice among offers, the provider's
   * offers asked now (stored as quotes, so the purchase takes the very offer chosen). `rules` lets a batch
   * decide all its parcels by the rules as they were when it read them.
   */
  async function decide(shipmentId: number, parcelId: number, rules?: ShippingRules): Promise<ParcelDecision> {
    const parcel = (await parcelFacts(shipmentId)).find((each) => each.parcelId === parcelId)
    if (!parcel) throw new ShipmentsErrors.ShipmentNotFound(shipmentId)
    const { facts } = parcel
    const match = matchRule(rules ?? (await current()), facts)
    if (!match.choice) return { parcelId, facts, match, outcome: 'none', reason: 'no shipping rule matches this parcel and there is no default' }
    const { integration, choice } = match.choice
    if (choice.kind === 'service') return { parcelId, facts, match, outcome: 'buy', integration, quote: null, carrier: choice.carrier, service: choice.service }
    const chosen = await rateChoice(shipmentId, parcelId, integration, choice)
    if ('refused' in chosen) return { parcelId, facts, match, outcome: 'none', reason: chosen.refused }
    return { parcelId, facts, match, outcome: 'buy', integration, quote: chosen.offer, carrier: chosen.offer.carrier, service: chosen.offer.service }
  }

  /** The provider's offers for the parcel, asked now and stored as quotes, and the one the choice takes. */
  async function rateChoice(shipmentId: number, parcelId: number, integration: string, choice: ShippingRuleChoice): Promise<{ offer: RateQuote } | { refused: string }> {
    return chooseOffer(choice, await deps.deliveries.quoteRates(shipmentId, parcelId, { integration }))
  }

  /**
   * The dry run: for each parcel its facts, every rule tried with its checks in words, the rule that
   * matched or the default, and with `rate` the offer the choice would take (quotes stored, nothing bought).
   */
  async function explain(shipmentId: number, options: { rate?: boolean | undefined } = {}): Promise<ShipmentExplanation> {
    const [rules, parcels] = await Promise.all([current(), parcelFacts(shipmentId)])
    return explainShipment(shipmentId, rules, parcels, options.rate === true ? rateChoice : null)
  }

  return { current, saved, replace, explain, parcelFacts, decide }
}

export type ShippingRulesService = ReturnType<typeof createShippingRules>
