// What the deliveries service's concerns share: the dependencies, a parcel as presented, the reads that
// refuse an unknown shipment or parcel, a parcel change's event and commit, the parcel's purchase lock,
// and the shipment's own tracking number following its label. It knows none of the concerns: what one
// needs of another is passed to its factory, never imported.
import type { ShipFromSetting } from './ship-from.js'
import type { AddressVerificationSetting } from './ship-to.js'
import type { FastifyBaseLogger } from 'fastify'
import { LockTimeoutError, type DataLayer, type NewOutboxMessage, type OutboxRow } from '../db/data-layer.js'
import type { ParcelRow } from '../db/parcels.js'
import { DeliveryErrors, ShipmentsErrors } from '../errors.js'
import type { CustomsInfo, PostalAddress, PurchasedLabel } from '../gateway/delivery-provider.js'
import type { ParcelItem } from '../db/parcels.js'
import type { IntegrationService } from '../gateway/integrations.js'
import type { ProviderRegistry } from '../gateway/providers.js'
import type { OrderStore } from '../order-store.js'
import type { OutboxDispatcher } from '../outbox/dispatcher.js'
import type { ShipmentService } from '../shipments/service.js'
import { toParcel, type Parcel } from '../model/parcel.js'

export interface DeliveryContext {
  userId?: string | null | undefined
}

/** What rates and purchases ask of the customs side (a room above deliveries; the plugin wires it in). */
export interface CustomsGate {
  /**
   * The parcel's declaration as its provider is sent it, or undefined when ship-from and ship-to share a
   * country. An incomplete one is refused (CustomsIncompleteError, 422, each line and field named) before
   * any provider call; with `keep` (a purchase) the declaration the label is bought with is stored first.
   */
  declarationFor(request: { shipment: { id: number; orderId: number; items: readonly ParcelItem[] }; parcel: ParcelRow; from: PostalAddress; to: PostalAddress; keep: boolean }): Promise<CustomsInfo | undefined>
}

export interface DeliveryServiceDependencies {
  data: DataLayer
  registry: ProviderRegistry
  integrations: IntegrationService
  shipments: ShipmentService
  orderStore: OrderStore
  dispatcher: Pick<OutboxDispatcher, 'claim' | 'deliver'>
  logger: FastifyBaseLogger
  timeZone: string
  clock: () => number
  lockTimeoutMs: number
  /** Where parcels ship from (the setting, else the option); rates and labels are refused without it. */
  shipFrom: ShipFromSetting
  /** How long a rate quote stays valid. */
  quoteLifetimeMs: number
  /** Address verification's value until a store admin saves the setting (the `addresses.verification` option); default off. */
  addressVerification?: AddressVerificationSetting | undefined
  /** International parcels' declarations (none: every parcel is rated and bought without one). */
  customs?: CustomsGate | undefined
}

const parcelKey = (shipmentId: number) => `shipment:${shipmentId}`

/** The shared part of one deliveries service: built once, handed to each concern's factory. */
export function createDeliveryServiceContext(deps: DeliveryServiceDependencies) {
  const { data, dispatcher, timeZone } = deps
  const present = (row: ParcelRow) => toParcel(row, timeZone)
  const userOf = (context: DeliveryContext) => context.userId ?? null

  async function requireShipment(shipmentId: number) {
    const shipment = await deps.shipments.get(shipmentId)
    if (!shipment) throw new ShipmentsErrors.ShipmentNotFound(shipmentId)
    return shipment
  }

  async function requireParcel(shipmentId: number, parcelId: number): Promise<ParcelRow> {
    const parcel = await data.parcels.find(parcelId)
    if (!parcel || parcel.shipmentId !== shipmentId) {
      await requireShipment(shipmentId)
      throw new DeliveryErrors.ParcelNotFound(parcelId)
    }
    return parcel
  }

  /** The event of a parcel change, written with it. */
  const parcelEvent =
    (name: string, userId: string | null, extra: Record<string, unknown> = {}) =>
    (row: ParcelRow, rows: ParcelRow[]): NewOutboxMessage[] => [
      {
        kind: 'event',
        name,
        orderingKey: parcelKey(row.shipmentId),
        payload: { shipmentId: row.shipmentId, parcel: present(row), parcels: rows.map(present), userId, ...extra },
      },
    ]

  async function committed(outcome: { row: ParcelRow; messages: OutboxRow[] } | undefined, notFound: () => Error): Promise<Parcel> {
    if (!outcome) throw notFound()
    await dispatcher.deliver(outcome.messages)
    return present(outcome.row)
  }

  /** Runs `task` holding the parcel's purchase lock: purchases, voids and parcel changes take turns, across instances. */
  async function withParcelLock<T>(parcelId: number, task: () => Promise<T>): Promise<T> {
    try {
      return await data.withNamedLock('labelPurchase', parcelId, deps.lockTimeoutMs, task)
    } catch (error) {
      // Another purchase of the parcel held the lock all along (a slow carrier): the caller may try again.
      if (error instanceof LockTimeoutError && error.lockName === `labelPurchase:${parcelId}`) throw new DeliveryErrors.PurchaseBusy(parcelId)
      throw error
    }
  }

  /**
   * Keeps the shipment's own tracking number working: a label's tracking number (with its carrier,
   * service and tracker page) fills a shipment that has none, so tracking webhooks that match shipments
   * by tracking number (EasyPost's tracker among them) move it; a void clears it again. Through the
   * shipment's update path, after the label's commit: a failure is logged, the label stays.
   */
  async function syncShipmentTracking(shipmentId: number, change: { bought: PurchasedLabel } | { voided: string | null }, userId: string | null): Promise<void> {
    try {
      const shipment = await deps.shipments.get(shipmentId)
      if (!shipment) return
      if ('bought' in change && shipment.trackingNumber === null) {
        const { bought } = change
        await deps.shipments.update(shipmentId, { trackingNumber: bought.trackingNumber, carrier: bought.carrier, service: bought.service, trackingUrl: bought.trackingUrl ?? undefined }, { userId })
      } else if ('voided' in change && change.voided !== null && shipment.trackingNumber === change.voided) {
        await deps.shipments.update(shipmentId, { trackingNumber: '', trackingUrl: '' }, { userId })
      }
    } catch (error) {
      deps.logger.warn({ err: error, shipmentId }, "Deliveries: the shipment's own tracking number could not follow its label")
    }
  }

  /** The parcel's customs declaration for its provider (undefined: domestic, or no customs side); refuses an incomplete one. */
  const customsFor: CustomsGate['declarationFor'] = async (request) => (deps.customs ? deps.customs.declarationFor(request) : undefined)

  return { deps, present, userOf, requireShipment, requireParcel, parcelEvent, committed, withParcelLock, syncShipmentTracking, customsFor }
}

export type DeliveryServiceContext = ReturnType<typeof createDeliveryServiceContext>
