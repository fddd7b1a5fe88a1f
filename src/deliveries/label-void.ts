// Voiding a parcel's label: the refund asked of the provider first, then the label leaves the parcel in
// one change with its history row and event, and the shipment's own tracking number follows.
import { inSpan } from '../telemetry.js'
import { DeliveryErrors } from '../errors.js'
import { DeliveryProviderError } from '../gateway/delivery-provider.js'
import type { DeliveryLabelPort } from './label-port.js'
import type { Parcel } from '../model/parcel.js'
import type { DeliveryContext, DeliveryServiceContext } from './service-context.js'

export function createLabelVoid(shared: DeliveryServiceContext, port: DeliveryLabelPort) {
  const { deps, userOf, requireParcel, parcelEvent, committed, withParcelLock, syncShipmentTracking } = shared
  const { data, dispatcher } = deps
  const { deliveryProviderById, journalFor, refusal } = port

  async function voidLabel(shipmentId: number, parcelId: number, context: DeliveryContext = {}): Promise<{ parcel: Parcel; refundStatus: string }> {
    await requireParcel(shipmentId, parcelId)
    return withParcelLock(parcelId, async () => {
      const parcel = await requireParcel(shipmentId, parcelId)
      const operation = parcel.labelOperationId ? await data.parcels.findOperation(parcel.labelOperationId) : undefined
      if (!operation || operation.state !== 'purchased' || !operation.externalId) throw new DeliveryErrors.LabelMissing(parcelId)
      const at = await deliveryProviderById(operation.integrationId)
      let refundStatus: string
      try {
        const externalId = operation.externalId
        ;({ refundStatus } = await inSpan('shipments.provider.void_label', { 'shipments.provider': at.provider.id, 'shipments.parcel.id': parcelId }, () =>
          at.provider.deliveries.voidLabel({ externalId }, at.context, journalFor(operation.operationId)),
        ))
      } catch (error) {
        if (error instanceof DeliveryProviderError) throw refusal(error)
        throw error
      }
      const userId = userOf(context)
      const outcome = await data.parcels.change({ parcelId }, () => ({
        columns: {
          status: 'pending',
          trackingNumber: null,
          trackingUrl: null,
          carrier: null,
          service: null,
          labelUrl: null,
          labelFormat: null,
          labelCost: null,
          labelCurrency: null,
          labelOperationId: null,
        },
        operation: { operationId: operation.operationId, columns: { state: 'voided' } },
        history: { action: 'labelVoided', message: `Refund ${refundStatus} (${parcel.carrier ?? ''} ${parcel.trackingNumber ?? ''})`.trim(), userId },
        messages: parcelEvent('labelVoided', userId, { operationId: operation.operationId, externalId: operation.externalId, integration: at.row.handle, refundStatus }),
        claimFor: dispatcher.claim,
      }))
      const voided = await committed(outcome, () => new DeliveryErrors.ParcelNotFound(parcelId))
      await syncShipmentTracking(shipmentId, { voided: parcel.trackingNumber }, userId)
      return { parcel: voided, refundStatus }
    })
  }

  return { voidLabel }
}
