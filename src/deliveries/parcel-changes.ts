// A shipment's parcels: listed, added (holding only what the shipment holds), changed and removed while
// they have no label; and moved forward by the carrier's tracking events.
import type { ParcelRow } from '../db/parcels.js'
import { DeliveryErrors, ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import { MAX_PARCELS_PER_SHIPMENT, parcelColumns, type Parcel, type ParcelInput } from '../model/parcel.js'
import type { DeliveryContext, DeliveryServiceContext } from './service-context.js'

export function createParcelChanges(shared: DeliveryServiceContext) {
  const { deps, present, userOf, requireShipment, requireParcel, parcelEvent, committed, withParcelLock } = shared
  const { data, dispatcher } = deps

  /** What a shipment holds, by order line: its own lines, or for an order-level shipment every shippable line in full; null when the store cannot tell. */
  async function heldQuantities(shipment: { orderId: number; items: ReadonlyArray<{ lineItemId: number; quantity: number }> }): Promise<Map<number, number> | null> {
    if (shipment.items.length > 0) return new Map(shipment.items.map((item) => [item.lineItemId, item.quantity]))
    const lines = await deps.orderStore.orderLines?.(shipment.orderId)
    if (!lines) return null
    return new Map(lines.filter((line) => line.shippable).map((line) => [line.id, line.quantity]))
  }

  /** Refuses items the shipment does not hold, or more units of a line than it holds. */
  async function checkItems(shipmentId: number, items: ParcelRow['items'] | undefined): Promise<void> {
    if (!items || items.length === 0) return
    const held = await heldQuantities(await requireShipment(shipmentId))
    // A host store without orderLines cannot say what an order-level shipment holds.
    if (!held) return
    const errors: Record<string, string[]> = {}
    items.forEach((item, index) => {
      const quantity = held.get(item.lineItemId)
      if (quantity === undefined) errors[`items.${index}`] = [`line ${item.lineItemId} is not on this shipment`]
      else if (item.quantity > quantity) errors[`items.${index}`] = [`line ${item.lineItemId}: ${item.quantity} in the parcel, ${quantity} on the shipment`]
    })
    if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
  }

  async function checkBox(boxId: number | null | undefined): Promise<void> {
    if (boxId !== undefined && boxId !== null && !(await data.parcels.findBox(boxId))) throw new ShipmentValidationError({ boxId: [`box ${boxId} does not exist`] })
  }

  async function listParcels(shipmentId: number): Promise<Parcel[]> {
    await requireShipment(shipmentId)
    return (await data.parcels.list(shipmentId)).map(present)
  }

  async function addParcel(shipmentId: number, input: ParcelInput, context: DeliveryContext = {}): Promise<Parcel> {
    const columns = parcelColumns(input, true)
    await requireShipment(shipmentId)
    await checkItems(shipmentId, columns.items)
    await checkBox(columns.boxId)
    // Counted under the shipment's lock, in the transaction that inserts: concurrent adds take turns.
    const outcome = await data.parcels.change({ shipmentId }, (_current, parcelCount) => {
      if (parcelCount >= MAX_PARCELS_PER_SHIPMENT) throw new ShipmentUpdateRejectedError(`A shipment may have at most ${MAX_PARCELS_PER_SHIPMENT} parcels.`)
      return {
        insert: {
          weight: columns.weight!,
          weightUnit: columns.weightUnit!,
          length: columns.length ?? null,
          width: columns.width ?? null,
          height: columns.height ?? null,
          dimensionUnit: columns.dimensionUnit ?? null,
          boxId: columns.boxId ?? null,
          items: columns.items ?? [],
        },
        history: { action: 'added', message: null, userId: userOf(context) },
        messages: parcelEvent('parcelAdded', userOf(context)),
        claimFor: dispatcher.claim,
      }
    })
    return committed(outcome, () => new ShipmentsErrors.ShipmentNotFound(shipmentId))
  }

  /** A parcel with a label (or a purchase under way) keeps its size: the label was bought for it. */
  async function requireUnlabelled(parcel: ParcelRow): Promise<void> {
    if (parcel.labelOperationId !== null || (await data.parcels.activeOperation(parcel.id))) throw new DeliveryErrors.ParcelLocked(parcel.id)
  }

  async function updateParcel(shipmentId: number, parcelId: number, input: ParcelInput, context: DeliveryContext = {}): Promise<Parcel> {
    await requireParcel(shipmentId, parcelId)
    const columns = parcelColumns(input, false)
    await checkItems(shipmentId, columns.items)
    await checkBox(columns.boxId)
    return withParcelLock(parcelId, async () => {
      await requireUnlabelled(await requireParcel(shipmentId, parcelId))
      const outcome = await data.parcels.change({ parcelId }, () => ({
        columns,
        history: { action: 'changed', message: null, userId: userOf(context) },
        messages: parcelEvent('parcelChanged', userOf(context)),
        claimFor: dispatcher.claim,
      }))
      return committed(outcome, () => new DeliveryErrors.ParcelNotFound(parcelId))
    })
  }

  async function removeParcel(shipmentId: number, parcelId: number, context: DeliveryContext = {}): Promise<Parcel> {
    await requireParcel(shipmentId, parcelId)
    return withParcelLock(parcelId, async () => {
      await requireUnlabelled(await requireParcel(shipmentId, parcelId))
      // Money was spent on it once: its operations and attempt log stay, and so does the parcel.
      if ((await data.parcels.operations(parcelId)).some((operation) => operation.state !== 'failed')) throw new DeliveryErrors.ParcelHasLabelHistory(parcelId)
      const outcome = await data.parcels.change({ parcelId }, () => ({
        remove: true,
        messages: parcelEvent('parcelRemoved', userOf(context)),
        claimFor: dispatcher.claim,
      }))
      return committed(outcome, () => new DeliveryErrors.ParcelNotFound(parcelId))
    })
  }

  /** Where a parcel stands on its way: tracking moves it forward only, never back. */
  const PROGRESS: Record<string, number> = { pending: 0, labelled: 1, shipped: 2, delivered: 3 }

  /**
   * A tracking event for a parcel's tracking number: `delivered` (the carrier's own code) or a mapped
   * `shipped` moves the parcel forward, with a history row and a parcelChanged event; null when no parcel
   * holds the number.
   */
  async function trackParcel(event: { trackingNumber: string; status: string; code: string; integration: string }) {
    const found = await data.parcels.findByTrackingNumber(event.trackingNumber)
    if (!found) return null
    const target = event.code.toLowerCase() === 'delivered' ? 'delivered' : event.status === 'shipped' ? 'shipped' : null
    const outcome = await data.parcels.change({ parcelId: found.id }, (current) => {
      if (!current || target === null || (PROGRESS[current.status] ?? 0) >= PROGRESS[target]!) return {}
      return {
        columns: { status: target },
        history: { action: target, message: `${event.integration}: ${event.code}`, userId: null },
        messages: parcelEvent('parcelChanged', null),
        claimFor: dispatcher.claim,
      }
    })
    if (!outcome) return null
    await dispatcher.deliver(outcome.messages)
    const parcels = await data.parcels.list(outcome.row.shipmentId)
    return {
      shipmentId: outcome.row.shipmentId,
      parcelId: outcome.row.id,
      parcelStatus: outcome.row.status,
      everyParcelShipped: parcels.every((parcel) => (PROGRESS[parcel.status] ?? 0) >= PROGRESS.shipped!),
    }
  }

  return { listParcels, addParcel, updateParcel, removeParcel, trackParcel }
}
