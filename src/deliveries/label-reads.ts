// What is read of a parcel's label: its file in another format (converted by the provider), and its
// operations with their attempt logs.
import type { LabelAttemptRow, LabelOperationRow } from '../db/parcels.js'
import { DeliveryErrors, ShipmentUpdateRejectedError } from '../errors.js'
import { DeliveryProviderError, type LabelFormat } from '../gateway/delivery-provider.js'
import { formatIsoWithOffset } from '../time.js'
import type { DeliveryLabelPort } from './label-port.js'
import type { DeliveryServiceContext } from './service-context.js'

/** A label operation with its attempt log, for audits and the admin page. */
export interface LabelOperation {
  operationId: string
  parcelId: number
  state: LabelOperationRow['state']
  carrier: string
  service: string
  externalId: string | null
  error: string | null
  userId: string | null
  dateCreated: string
  attempts: Array<Omit<LabelAttemptRow, 'id' | 'operationId' | 'createdAt'> & { dateCreated: string }>
}

/** The forms a provider returned with a parcel's international label, kept with its declaration. */
export interface ParcelForms {
  /** False when the parcel has no customs declaration (a domestic parcel): it has no forms either. */
  declared: boolean
  forms: Array<{ type: string; url: string }>
}

export function createLabelReads(shared: DeliveryServiceContext, port: DeliveryLabelPort) {
  const { deps, requireParcel } = shared
  const { data, timeZone } = deps
  const { deliveryProviderById, journalFor, refusal } = port

  /** The label in another format (EasyPost converts from PNG); the stored label stays as bought. */
  async function labelDocument(shipmentId: number, parcelId: number, format: LabelFormat): Promise<{ url: string; format: string }> {
    const parcel = await requireParcel(shipmentId, parcelId)
    const operation = parcel.labelOperationId ? await data.parcels.findOperation(parcel.labelOperationId) : undefined
    if (!operation?.externalId || parcel.labelUrl === null) throw new DeliveryErrors.LabelMissing(parcelId)
    if ((parcel.labelFormat ?? '').toUpperCase() === format) return { url: parcel.labelUrl, format }
    const at = await deliveryProviderById(operation.integrationId)
    if (!at.provider.deliveries.labelDocument) throw new ShipmentUpdateRejectedError(`The integration ${at.row.handle} cannot convert labels; the label is ${parcel.labelFormat}.`)
    try {
      return await at.provider.deliveries.labelDocument({ externalId: operation.externalId, format }, at.context, journalFor(operation.operationId))
    } catch (error) {
      if (error instanceof DeliveryProviderError) throw refusal(error)
      throw error
    }
  }

  async function labelOperations(shipmentId: number, parcelId: number): Promise<LabelOperation[]> {
    await requireParcel(shipmentId, parcelId)
    const operations = await data.parcels.operations(parcelId)
    return Promise.all(
      operations.map(async (row) => ({
        operationId: row.operationId,
        parcelId: row.parcelId,
        state: row.state,
        carrier: row.carrier,
        service: row.service,
        externalId: row.externalId,
        error: row.error,
        userId: row.userId,
        dateCreated: formatIsoWithOffset(row.createdAt.getTime(), timeZone),
        attempts: (await data.parcels.attempts(row.operationId)).map(({ step, request, response, statusCode, error, durationMs, createdAt }) => ({
          step,
          request,
          response,
          statusCode,
          error,
          durationMs,
          dateCreated: formatIsoWithOffset(createdAt.getTime(), timeZone),
        })),
      })),
    )
  }

  /** The forms kept with the parcel's label (CN22/CN23, commercial invoice): empty before purchase and for a domestic parcel. */
  async function labelForms(shipmentId: number, parcelId: number): Promise<ParcelForms> {
    await requireParcel(shipmentId, parcelId)
    const declaration = await data.customs.declaration(parcelId)
    return { declared: declaration !== undefined, forms: (declaration?.forms ?? []).map(({ type, url }) => ({ type, url })) }
  }

  return { labelDocument, labelOperations, labelForms }
}
