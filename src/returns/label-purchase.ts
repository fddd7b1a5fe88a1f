// The return label bought exactly once through a delivery provider (the deliveries' label port), as
// outbound labels are: the intent committed first, a purchase whose outcome was lost looked up, never
// bought twice.
import { randomUUID } from 'node:crypto'
import { parcelColumns } from '../model/parcel.js'
import type { DeliveryProviderAt } from '../deliveries/service.js'
import { ReturnErrors, ShipmentValidationError } from '../errors.js'
import { DeliveryProviderError, LABEL_FORMATS, unknownOutcomeReason, type LabelFormat, type LabelPurchaseRequest, type PurchasedLabel } from '../gateway/delivery-provider.js'
import type { Return } from '../model/return.js'
import { isObject, optionalText, refuseIf, SHORT, type ReturnContext, type ReturnServiceContext } from './service-context.js'

export interface ReturnLabelInput {
  integration: string
  carrier: string
  service: string
  /** The parcel the customer sends back. */
  weight: { value: string; unit: string }
  dimensions?: { length: string; width: string; height: string; unit: string } | null | undefined
  labelFormat?: LabelFormat | undefined
}

export function createReturnLabelPurchase(shared: ReturnServiceContext) {
  const { deps, requireReturn, change, checkState, withLabelLock } = shared
  const { data, labels } = deps

  function parseLabelInput(input: unknown): { integration: string; carrier: string; service: string; labelFormat: LabelFormat; parcel: ReturnType<typeof parcelColumns> } {
    if (!isObject(input)) throw new ShipmentValidationError({ body: ['must be an object'] })
    const errors: Record<string, string[]> = {}
    for (const key of Object.keys(input)) if (!['integration', 'carrier', 'service', 'weight', 'dimensions', 'labelFormat'].includes(key)) errors[key] = ['is not a field of a return label']
    for (const field of ['integration', 'carrier', 'service'] as const) {
      const value = input[field]
      if (typeof value !== 'string' || value.trim() === '') errors[field] = ['is required, at most 255 characters']
      else optionalText(value, field, errors, SHORT)
    }
    const labelFormat = (input.labelFormat ?? 'PDF') as LabelFormat
    if (!(LABEL_FORMATS as readonly string[]).includes(labelFormat)) errors.labelFormat = [`must be one of ${LABEL_FORMATS.join(', ')}`]
    let parcel: ReturnType<typeof parcelColumns> = {}
    try {
      parcel = parcelColumns({ weight: input.weight, ...(input.dimensions !== undefined && { dimensions: input.dimensions }) }, true)
    } catch (error) {
      if (!(error instanceof ShipmentValidationError)) throw error
      Object.assign(errors, error.errors)
    }
    refuseIf(errors)
    return { integration: input.integration as string, carrier: input.carrier as string, service: input.service as string, labelFormat, parcel }
  }

  /**
   * Buys the return label exactly once, as outbound labels are bought: the operation id is committed on
   * the return before the provider is called (EasyPost: a shipment with `is_return`), the provider's id as
   * soon as it is known, and a purchase whose outcome was lost is looked up there, never bought again.
   */
  async function buyLabel(id: number, input: ReturnLabelInput, context: ReturnContext = {}): Promise<Return> {
    const parsed = parseLabelInput(input)
    const row = await requireReturn(id)
    const at = await labels.deliveryProvider(parsed.integration)
    const { from, to } = await labels.addresses({ id: null, orderId: row.orderId })
    return withLabelLock(id, async () => {
      let current = await requireReturn(id)
      if (current.labelState === 'purchased' || (current.labelOperationId === null && current.trackingNumber !== null)) throw new ReturnErrors.LabelExists(id)
      const resumed = current.labelOperationId !== null
      if (!resumed) {
        checkState(current, 'label_sent', ['authorised'])
        if (!(await data.returns.beginLabel(id, { operationId: randomUUID(), integrationId: at.row.id, carrier: parsed.carrier, service: parsed.service }))) throw new ReturnErrors.LabelBusy(id)
        current = await requireReturn(id)
      }
      const operationId = current.labelOperationId!
      const operationAt: DeliveryProviderAt = current.labelIntegrationId === at.row.id || current.labelIntegrationId === null ? at : await labels.deliveryProviderById(current.labelIntegrationId)
      const journal = {
        ...labels.journalFor(operationId),
        // The provider's id is kept on the return (the purchase has no parcel).
        externalIdKnown: (externalId: string) => data.returns.updateLabel(id, { labelExternalId: externalId }),
      }
      const request: LabelPurchaseRequest = {
        operationId,
        shipmentReference: current.reference,
        parcelId: 0,
        parcel: labels.measures({ weight: parsed.parcel.weight!, weightUnit: parsed.parcel.weightUnit!, length: parsed.parcel.length ?? null, width: parsed.parcel.width ?? null, height: parsed.parcel.height ?? null, dimensionUnit: parsed.parcel.dimensionUnit ?? null }),
        from,
        to,
        isReturn: true,
        // A purchase whose outcome is unknown is finished as it was first asked, never a second one beside it.
        carrier: current.carrier ?? parsed.carrier,
        service: current.service ?? parsed.service,
        labelFormat: parsed.labelFormat,
        externalId: current.labelExternalId,
      }
      const recover = async (): Promise<PurchasedLabel | null> => {
        const externalId = (await data.returns.find(id))?.labelExternalId
        if (!externalId) return null
        const found = await operationAt.provider.deliveries.recoverLabel({ ...request, externalId }, operationAt.context, journal)
        return found.state === 'purchased' ? found.label : null
      }
      const finish = (label: PurchasedLabel) =>
        change(id, context, (latest) => ({
          columns: {
            labelState: 'purchased',
            labelExternalId: label.externalId,
            trackingNumber: label.trackingNumber,
            trackingUrl: label.trackingUrl,
            carrier: label.carrier,
            service: label.service,
            labelUrl: label.labelUrl,
            labelFormat: label.labelFormat,
            labelCost: label.cost,
            labelCurrency: label.currency,
          },
          // A label bought for a return rejected meanwhile is kept (it was paid for); the state stays.
          state: latest.state === 'authorised' ? 'label_sent' : null,
          action: 'label_sent',
          message: `${label.carrier} ${label.service} ${label.trackingNumber} (${label.cost} ${label.currency})`,
          // The customer's label is out: mails that carry it (notifications on returnLabelSent) follow it.
          event: latest.state === 'authorised' ? 'returnLabelSent' : null,
        }))
      if (resumed) {
        try {
          const label = await recover()
          if (label) return finish(label)
        } catch (error) {
          if (!(error instanceof DeliveryProviderError)) throw error
          throw new ReturnErrors.LabelOutcomeUnknown(id, unknownOutcomeReason(undefined, error))
        }
      }
      try {
        const label = await operationAt.provider.deliveries.purchaseLabel({ ...request, externalId: (await data.returns.find(id))?.labelExternalId ?? null }, operationAt.context, journal)
        return await finish(label)
      } catch (error) {
        if (!(error instanceof DeliveryProviderError)) {
          deps.logger.error({ err: error, operationId, returnId: id }, 'Return label purchase failed with an unexpected error; its outcome is reconciled on the next try')
          throw new ReturnErrors.LabelOutcomeUnknown(id, unknownOutcomeReason(error))
        }
        if (error.kind === 'refused') {
          // Nothing was bought: the return is free for another purchase (or a tracking number by hand).
          await data.returns.updateLabel(id, { labelOperationId: null, labelExternalId: null, labelIntegrationId: null, labelState: null, carrier: null, service: null })
          throw labels.refusal(error)
        }
        let label: PurchasedLabel | null = null
        let lookupFailure: unknown
        try {
          label = await recover()
        } catch (lookupError) {
          lookupFailure = lookupError
          deps.logger.warn({ err: lookupError, operationId, returnId: id }, 'Return label: the lookup after an unknown outcome failed too')
        }
        if (label) return finish(label)
        throw new ReturnErrors.LabelOutcomeUnknown(id, unknownOutcomeReason(error, lookupFailure))
      }
    })
  }

  return { buyLabel }
}
