// The label port: an integration that sells labels with its provider and a context to call it with, an
// operation's attempt log (secrets masked), a parcel's addresses and measures, a provider's refusal in
// the store admin's words. Rates and labels go through it; the returns service borrows it.
import type { IntegrationRow } from '../db/data-layer.js'
import type { ParcelRow } from '../db/parcels.js'
import { ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import type { DeliveryJournal, ParcelMeasures } from '../gateway/delivery-provider.js'
import { providerFailureMessage, type DeliveryProviderError } from '../gateway/delivery-provider.js'
import type { AnyProviderDefinition, ProviderContext } from '../gateway/providers.js'
import type { PostalAddress } from '../order-store.js'
import type { DeliveryServiceContext } from './service-context.js'
import { toInches, toOunces, type DimensionUnit, type WeightUnit } from '../model/units.js'
import { shipToOf, type ShipTo } from './ship-to.js'

/** An integration that sells labels, its provider and a context to call it with. */
export interface DeliveryProviderAt {
  row: IntegrationRow
  provider: AnyProviderDefinition & { deliveries: NonNullable<AnyProviderDefinition['deliveries']> }
  context: ProviderContext
}

/** Keys of what a provider is sent or answers that are never written to the attempt log. */
const SECRET_KEY = /key|secret|password|authorization|token|credential/i

/** A copy of `value` with secret-looking keys masked, bounded in depth and size. */
function redacted(value: unknown, depth = 0): unknown {
  if (depth > 6) return '[deep]'
  if (Array.isArray(value)) return value.slice(0, 50).map((each) => redacted(each, depth + 1))
  if (typeof value === 'string') return value.length > 2000 ? `${value.slice(0, 2000)}…` : value
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([key, each]) => [key, SECRET_KEY.test(key) ? '********' : redacted(each, depth + 1)]))
}

export function createLabelPort(shared: DeliveryServiceContext) {
  const { deps } = shared
  const { data, registry, integrations } = deps

  async function deliveryProvider(handle: unknown, field = 'integration'): Promise<DeliveryProviderAt> {
    if (typeof handle !== 'string' || handle === '') throw new ShipmentValidationError({ [field]: ['is required: the handle of an integration that sells labels'] })
    const row = await data.findIntegration(handle)
    if (!row) throw new ShipmentValidationError({ [field]: [`no integration has the handle "${handle}"`] })
    const provider = registry.get(row.providerId ?? '')
    if (!provider?.deliveries) throw new ShipmentValidationError({ [field]: [`the integration "${handle}" does not sell labels`] })
    if (!integrations.isEnabled(row)) throw new ShipmentUpdateRejectedError(`The integration ${handle} is disabled.`)
    let context: ProviderContext
    try {
      context = integrations.contextFor(row, deps.logger, { integration: handle })
    } catch (error) {
      throw new ShipmentUpdateRejectedError(error instanceof Error ? error.message : String(error))
    }
    return { row, provider: provider as DeliveryProviderAt['provider'], context }
  }

  function measures(parcel: Pick<ParcelRow, 'weight' | 'weightUnit' | 'length' | 'width' | 'height' | 'dimensionUnit'>): ParcelMeasures {
    const unit = parcel.dimensionUnit as DimensionUnit | null
    const side = (value: string | null) => (value !== null && unit !== null ? toInches(value, unit) : null)
    return { weightOunces: toOunces(parcel.weight, parcel.weightUnit as WeightUnit), lengthInches: side(parcel.length), widthInches: side(parcel.width), heightInches: side(parcel.height) }
  }

  /** The shipment's ship-to (its own when a correction was accepted and its check holds, else the order's) with its check. */
  async function shipTo(shipment: { id: number | null; orderId: number }): Promise<ShipTo & { orderReference: string | null }> {
    const [order, check] = await Promise.all([deps.orderStore.findOrder(shipment.orderId), shipment.id === null ? undefined : data.customs.addressCheck(shipment.id)])
    return { ...shipToOf(order?.shippingAddress ?? null, check), orderReference: order?.reference ?? null }
  }

  /**
   * Both addresses of a shipment's rates and labels: the ship-from setting and the shipment's ship-to. A
   * return (of the order, not of one shipment: `id` null) goes back from the order's address.
   */
  async function addresses(shipment: { id: number | null; orderId: number }): Promise<{ from: PostalAddress; to: PostalAddress }> {
    const [{ address: from }, to] = await Promise.all([deps.shipFrom.get(), shipTo(shipment)])
    if (!from) throw new ShipmentUpdateRejectedError('No ship-from address is set (on the Boxes page, or the deliveries.shipFrom option): rates and labels need one.')
    if (!to.address) throw new ShipmentUpdateRejectedError(`Order ${to.orderReference ?? shipment.orderId} has no shipping address: rates and labels need one.`)
    return { from, to: to.address }
  }

  function journalFor(operationId: string): DeliveryJournal {
    return {
      externalIdKnown: (externalId) => data.parcels.updateOperation(operationId, { externalId }),
      attempt: (entry) =>
        data.parcels.recordAttempt({
          operationId,
          step: entry.step,
          request: redacted(entry.request) as Record<string, unknown>,
          response: redacted(entry.response) as Record<string, unknown>,
          statusCode: entry.statusCode,
          error: entry.error,
          durationMs: Math.max(0, Math.round(entry.durationMs)),
        }),
    }
  }

  /** A provider's refusal in the store admin's words: 422 `{success: false, error}`. */
  const refusal = (error: DeliveryProviderError) => new ShipmentUpdateRejectedError(providerFailureMessage(error), { cause: error })

  async function deliveryProviderById(integrationId: number): Promise<DeliveryProviderAt> {
    const row = (await data.listIntegrations()).find((each) => each.id === integrationId)
    if (!row) throw new ShipmentUpdateRejectedError(`The integration of an unfinished label purchase (id ${integrationId}) no longer exists.`)
    return deliveryProvider(row.handle)
  }

  return { deliveryProvider, deliveryProviderById, journalFor, addresses, shipTo, measures, refusal }
}

export type DeliveryLabelPort = ReturnType<typeof createLabelPort>
