// Label purchase, exactly once: the intent committed before the provider is called, and a purchase whose
// outcome was lost looked up by the provider's own id and finished as it was asked, never bought twice.
import { randomUUID } from 'node:crypto'
import type { DataLayer, IntegrationRow, ParcelPlan } from '../db/data-layer.js'
import type { FastifyBaseLogger } from 'fastify'
import type { LabelOperationRow, ParcelRow } from '../db/parcels.js'
import { DeliveryErrors, ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import { inSpan, instruments } from '../telemetry.js'
import type { CustomsInfo, LabelFormat, LabelPurchaseRequest, PurchasedLabel } from '../gateway/delivery-provider.js'
import { DeliveryProviderError, LABEL_FORMATS, unknownOutcomeReason } from '../gateway/delivery-provider.js'
import type { PostalAddress } from '../order-store.js'
import type { DeliveryLabelPort } from './label-port.js'
import type { Parcel } from '../model/parcel.js'
import type { DeliveryContext, DeliveryServiceContext } from './service-context.js'
import type { AddressGate } from './ship-to.js'

export interface BuyLabelInput {
  /** The handle of the integration whose provider buys the label. */
  integration: string
  /** A stored quote (`quoteRates`): refused when it expired or the parcel or addresses changed since. */
  quoteId?: number | undefined
  /** Without a quote: the carrier and service to buy. */
  carrier?: string | undefined
  service?: string | undefined
  labelFormat?: LabelFormat | undefined
}

export interface LabelPurchaseResult {
  parcel: Parcel
  operationId: string
  /** True when the label was found at the provider after an earlier attempt's outcome was unknown. */
  recovered: boolean
}

/** What a purchase needs of the rates: the carrier and service to buy, from a quote or named. */
export interface LabelPurchaseRates {
  chosenRate(input: BuyLabelInput, parcel: ParcelRow, integration: IntegrationRow, from: PostalAddress, to: PostalAddress, customs?: CustomsInfo): Promise<{ carrier: string; service: string }>
  /** The ship-to gate (address-checks.ts), before anything is written or asked of the provider. */
  addressGate?: AddressGate | undefined
}

export function createLabelPurchase(shared: DeliveryServiceContext, port: DeliveryLabelPort, { chosenRate, addressGate }: LabelPurchaseRates) {
  const { deps, userOf, requireShipment, requireParcel, parcelEvent, committed, withParcelLock, syncShipmentTracking, customsFor } = shared
  const { data, dispatcher } = deps
  const { deliveryProvider, deliveryProviderById, journalFor, addresses, measures, refusal } = port

  /** Writes a bought label on the parcel with its history row, the operation's state and the event, in one transaction. */
  async function commitPurchase(operation: LabelOperationRow, label: PurchasedLabel, integration: string): Promise<Parcel> {
    const outcome = await data.parcels.change({ parcelId: operation.parcelId }, (): ParcelPlan => ({
      columns: {
        status: 'labelled',
        trackingNumber: label.trackingNumber,
        trackingUrl: label.trackingUrl,
        carrier: label.carrier,
        service: label.service,
        labelUrl: label.labelUrl,
        labelFormat: label.labelFormat,
        labelCost: label.cost,
        labelCurrency: label.currency,
        labelOperationId: operation.operationId,
      },
      operation: { operationId: operation.operationId, columns: { state: 'purchased', externalId: label.externalId, error: null } },
      history: { action: 'labelPurchased', message: `${label.carrier} ${label.service} ${label.trackingNumber} (${label.cost} ${label.currency})`, userId: operation.userId },
      messages: parcelEvent('labelPurchased', operation.userId, { operationId: operation.operationId, externalId: label.externalId, integration }),
      claimFor: dispatcher.claim,
    }))
    const parcel = await committed(outcome, () => new DeliveryErrors.ParcelNotFound(operation.parcelId))
    await keepForms(deps, operation, label)
    await syncShipmentTracking(operation.shipmentId, { bought: label }, operation.userId)
    return parcel
  }

  async function purchase(shipmentId: number, parcelId: number, input: BuyLabelInput, context: DeliveryContext): Promise<LabelPurchaseResult> {
    await requireParcel(shipmentId, parcelId)
    const shipment = await requireShipment(shipmentId)
    await addressGate?.(shipment)
    const labelFormat = input.labelFormat ?? 'PDF'
    if (!(LABEL_FORMATS as readonly string[]).includes(labelFormat)) throw new ShipmentValidationError({ labelFormat: [`must be one of ${LABEL_FORMATS.join(', ')}`] })
    const at = await deliveryProvider(input.integration)
    const { from, to } = await addresses(shipment)

    return withParcelLock(parcelId, async () => {
      const parcel = await requireParcel(shipmentId, parcelId)
      if (parcel.labelOperationId !== null) throw new DeliveryErrors.LabelExists(parcelId)
      let operation = await data.parcels.activeOperation(parcelId)
      if (operation?.state === 'purchased') throw new DeliveryErrors.LabelExists(parcelId)
      // The customs gate: an incomplete declaration is refused before anything is written or any provider
      // called; a complete one is stored (the provider's forms are kept with it) and sent with the purchase.
      const customs = await customsFor({ shipment, parcel, from, to, keep: true })
      // An earlier purchase whose outcome is unknown is finished first, as it was asked: never a second one beside it.
      const resumed = operation !== undefined
      if (!operation) {
        const choice = await chosenRate(input, parcel, at.row, from, to, customs)
        const begun = await data.parcels.beginOperation({
          operationId: randomUUID(),
          parcelId,
          shipmentId,
          integrationId: at.row.id,
          providerId: at.provider.id,
          quoteId: input.quoteId ?? null,
          carrier: choice.carrier,
          service: choice.service,
          userId: userOf(context),
        })
        if (begun === 'busy') throw new DeliveryErrors.PurchaseBusy(parcelId)
        operation = begun
      }
      const op = operation
      const operationAt = op.integrationId === at.row.id ? at : await deliveryProviderById(op.integrationId)
      const journal = journalFor(op.operationId)
      const request: LabelPurchaseRequest = {
        operationId: op.operationId,
        shipmentReference: shipment.reference,
        parcelId,
        parcel: measures(parcel),
        from,
        to,
        carrier: op.carrier,
        service: op.service,
        labelFormat,
        externalId: op.externalId,
        ...(customs ? { customs } : {}),
      }
      const providerAttributes = { 'shipments.provider': operationAt.provider.id, 'shipments.carrier': op.carrier, 'shipments.service': op.service }
      const recover = async (): Promise<PurchasedLabel | null> => {
        const fresh = await data.parcels.findOperation(op.operationId)
        const externalId = fresh?.externalId
        if (!externalId) return null
        const found = await inSpan('shipments.provider.recover_label', providerAttributes, () =>
          operationAt.provider.deliveries.recoverLabel({ ...request, externalId }, operationAt.context, journal),
        )
        return found.state === 'purchased' ? found.label : null
      }
      const finish = async (label: PurchasedLabel, recovered: boolean): Promise<LabelPurchaseResult> => ({
        parcel: await commitPurchase(op, label, operationAt.row.handle),
        operationId: op.operationId,
        recovered,
      })

      if (resumed) {
        try {
          const label = await recover()
          if (label) return finish(label, true)
        } catch (error) {
          if (!(error instanceof DeliveryProviderError)) throw error
          throw new DeliveryErrors.OutcomeUnknown(parcelId, unknownOutcomeReason(undefined, error))
        }
      }
      try {
        // A purchase begun just now has no provider id yet; a resumed one may have got it during the recovery.
        const externalId = resumed ? ((await data.parcels.findOperation(op.operationId))?.externalId ?? null) : op.externalId
        const label = await inSpan('shipments.provider.purchase_label', providerAttributes, () =>
          operationAt.provider.deliveries.purchaseLabel({ ...request, externalId }, operationAt.context, journal),
        )
        return await finish(label, resumed)
      } catch (error) {
        if (!(error instanceof DeliveryProviderError)) {
          // Anything else (a bug, a dropped connection to our own database) leaves the outcome open.
          deps.logger.error({ err: error, operationId: op.operationId }, 'Label purchase failed with an unexpected error; its outcome is reconciled on the next try')
          throw new DeliveryErrors.OutcomeUnknown(parcelId, unknownOutcomeReason(error))
        }
        if (error.kind === 'refused') {
          await data.parcels.updateOperation(op.operationId, { state: 'failed', error: error.message })
          throw refusal(error)
        }
        // Bought already, or no answer: look it up by the provider's id instead of buying again.
        let label: PurchasedLabel | null = null
        let lookupFailure: unknown
        try {
          label = await recover()
        } catch (lookupError) {
          lookupFailure = lookupError
          deps.logger.warn({ err: lookupError, operationId: op.operationId }, 'Label purchase: the lookup after an unknown outcome failed too')
        }
        if (label) return finish(label, true)
        const reason = unknownOutcomeReason(error, lookupFailure)
        await data.parcels.updateOperation(op.operationId, { error: reason })
        throw new DeliveryErrors.OutcomeUnknown(parcelId, reason)
      }
    })
  }

  return { buyLabel: withPurchaseTelemetry(purchase) }
}

/**
 * The forms the provider returned with an international label (checked by the provider, one by one),
 * kept with the parcel's declaration (a no-op without one). The label is committed already: a failure
 * here is logged, never the purchase's failure (the forms can be had again from the provider).
 */
async function keepForms({ data, logger }: { data: Pick<DataLayer, 'customs'>; logger: FastifyBaseLogger }, operation: LabelOperationRow, label: PurchasedLabel): Promise<void> {
  if (!label.forms || label.forms.length === 0) return
  try {
    await data.customs.saveForms(operation.parcelId, label.forms.map(({ type, url }) => ({ type, url })))
  } catch (error) {
    logger.error({ err: error, operationId: operation.operationId, parcelId: operation.parcelId }, "The label's customs forms could not be kept")
  }
}

/**
 * A purchase in its span (`shipments.label.purchase`, the provider's calls as its children), counted by
 * outcome and carrier, its cost by currency and its duration.
 */
function withPurchaseTelemetry(purchase: (shipmentId: number, parcelId: number, input: BuyLabelInput, context: DeliveryContext) => Promise<LabelPurchaseResult>) {
  return function buyLabel(shipmentId: number, parcelId: number, input: BuyLabelInput, context: DeliveryContext = {}): Promise<LabelPurchaseResult> {
    const attributes = { 'shipments.shipment.id': shipmentId, 'shipments.parcel.id': parcelId, 'shipments.integration': String(input.integration).slice(0, 100) }
    return inSpan('shipments.label.purchase', attributes, async (span) => {
      const { labelPurchases, labelCost, labelPurchaseDuration } = instruments()
      const started = performance.now()
      let outcome = 'error'
      let carrier = 'none'
      try {
        const result = await purchase(shipmentId, parcelId, input, context)
        outcome = result.recovered ? 'recovered' : 'purchased'
        carrier = result.parcel.carrier ?? 'none'
        const cost = result.parcel.label?.cost
        if (cost) labelCost.add(Number(cost.amount), { 'shipments.currency': cost.currency })
        return result
      } catch (error) {
        outcome = purchaseFailure(error)
        throw error
      } finally {
        span.setAttributes({ 'shipments.outcome': outcome, 'shipments.carrier': carrier })
        labelPurchases.add(1, { 'shipments.outcome': outcome, 'shipments.carrier': carrier })
        labelPurchaseDuration.record((performance.now() - started) / 1000, { 'shipments.outcome': outcome })
      }
    })
  }
}

/** A failed purchase's outcome for the metrics: refused by the carrier, unknown, or refused before any call. */
function purchaseFailure(error: unknown): string {
  if (error instanceof DeliveryErrors.OutcomeUnknown) return 'unknown'
  if (error instanceof DeliveryErrors.LabelExists || error instanceof DeliveryErrors.PurchaseBusy) return 'conflict'
  if (error instanceof ShipmentUpdateRejectedError && error.cause instanceof DeliveryProviderError) return 'refused'
  return 'invalid'
}
