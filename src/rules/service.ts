// The shipping rules as the package keeps them (one setting: the ordered list and the default, replaced
// whole, so its order is never half-saved), a parcel's facts, and the decision for a parcel: which rule,
// why, and what to buy (a stored quote the rule's choice took, or a named carrier and service).
import type { DataLayer } from '../db/data-layer.js'
import type { DeliveryService, RateQuote } from '../deliveries/service.js'
import { ShipmentsErrors } from '../errors.js'
import type { OrderStore } from '../order-store.js'
import type { ShipmentService } from '../shipments/service.js'
import { chooseOffer, matchRule, type ParcelFacts, type RuleMatch, type ShippingRules } from './model.js'

export const SHIPPING_RULES_STATE_KEY = 'rules.shippingRules'

const NO_RULES: ShippingRules = { rules: [], fallback: null }

export interface ShippingRulesDependencies {
  data: DataLayer
  deliveries: Pick<DeliveryService, 'listParcels' | 'quoteRates'>
  shipments: Pick<ShipmentService, 'get'>
  orderStore: Pick<OrderStore, 'findOrder'>
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
  /** The stored rules, or none. */
  async function current(): Promise<ShippingRules> {
    const stored = await deps.data.packageState(SHIPPING_RULES_STATE_KEY)
    return stored ? (JSON.parse(stored) as ShippingRules) : NO_RULES
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
    const quotes = await deps.deliveries.quoteRates(shipmentId, parcelId, { integration })
    const chosen = chooseOffer(choice, quotes)
    if ('refused' in chosen) return { parcelId, facts, match, outcome: 'none', reason: chosen.refused }
    return { parcelId, facts, match, outcome: 'buy', integration, quote: chosen.offer, carrier: chosen.offer.carrier, service: chosen.offer.service }
  }

  return { current, parcelFacts, decide }
}

export type ShippingRulesService = ReturnType<typeof createShippingRules>
