// What the package records of a shipment at an integration: where it lives there (its id and page),
// and the integration's webhook deliveries, as the integration's page lists them.
import { IntegrationConfigError, ShipmentsErrors } from '../errors.js'
import { formatIsoWithOffset } from '../time.js'
import { TEXT_LIMITS, textProblem, type TextRule } from '../text.js'
import type { ExternalReference } from './integration.js'
import { SHORT_TEXT, type IntegrationServiceContext } from './integration-context.js'

/** A webhook delivery as the integration's page lists it. */
export interface DeliveryRecord {
  deliveryId: string
  /** ISO 8601 in the site timezone. */
  date: string
  outcome: string
  reason: string | null
}

export function createIntegrationRecords(shared: IntegrationServiceContext) {
  const { deps, requireRow } = shared
  const { data, timeZone } = deps

  return {
    /** Records where a shipment lives at an integration (its id and page there). */
    async setExternalReference(shipmentId: number, handle: string, reference: { externalId?: string | null | undefined; externalUrl?: string | null | undefined }) {
      if (!(await deps.shipments.get(shipmentId))) throw new ShipmentsErrors.ShipmentNotFound(shipmentId)
      const rules: Array<['externalId' | 'externalUrl', TextRule]> = [
        ['externalId', SHORT_TEXT],
        ['externalUrl', { maxLength: TEXT_LIMITS.url }],
      ]
      for (const [key, rule] of rules) {
        const value = reference[key]
        const problem = typeof value === 'string' ? textProblem(value, rule) : null
        if (problem) throw new IntegrationConfigError(`${key}: ${problem}`)
      }
      const integrationId = (await requireRow(handle)).id
      await data.setExternalReference(shipmentId, integrationId, reference.externalId ?? null, reference.externalUrl ?? null)
    },

    /**
     * The integration's newest recorded deliveries, newest first. A delivery's outcome is what its
     * record says (applied, duplicate, stale, rejected); a record without one is a delivery applied.
     */
    async recentDeliveries(handle: string, limit = 50): Promise<DeliveryRecord[]> {
      const row = await requireRow(handle)
      const rows = await data.recentDeliveries(row.id, Math.min(500, Math.max(1, Math.floor(limit))))
      return rows.map((delivery) => ({
        deliveryId: delivery.deliveryId,
        date: formatIsoWithOffset(delivery.createdAt.getTime(), timeZone),
        outcome: typeof delivery.outcome.outcome === 'string' ? delivery.outcome.outcome : 'applied',
        reason: typeof delivery.outcome.reason === 'string' ? delivery.outcome.reason : null,
      }))
    },

    async externalReferences(shipmentId: number): Promise<ExternalReference[]> {
      return (await data.externalReferences(shipmentId)).map((row) => ({
        ...row,
        lastPushAt: row.lastPushAt ? formatIsoWithOffset(row.lastPushAt.getTime(), timeZone) : null,
      }))
    },
  }
}
