// What a change writes to a shipment, planned against the row as read inside the write transaction:
// the columns, the fields merged, and on a status change its history row and the order-advance claim.
import type { ShipmentChangePlan, ShipmentColumns, ShipmentRow } from '../db/data-layer.js'
import type { ShipmentPatch } from './update-input.js'
import type { ShipmentServiceContext } from './service-context.js'
import type { ExternalEvent } from './update-context.js'

export function createUpdatePlan(shared: ShipmentServiceContext) {
  const { deps } = shared

  /** What the patch writes to the shipment as it is now (read inside the write transaction). */
  function planChange(before: ShipmentRow, patch: ShipmentPatch, userId: string | null, statusBeforeOrderCancel: string | null = null, external?: ExternalEvent): ShipmentChangePlan {
    const now = new Date(deps.clock())
    const columns: ShipmentColumns = { ...patch.columns, updatedAt: now }
    if (external) {
      if (external.estimatedDelivery !== undefined && external.estimatedDelivery !== before.estimatedDelivery) {
        columns.estimatedDelivery = external.estimatedDelivery
        columns.estimatedDeliverySource = patch.integrationHandle
      }
      // The service's public tracking page is better than none: a link the shop set itself stays.
      if (external.externalUrl && before.trackingUrl === null && patch.columns.trackingUrl === undefined) columns.trackingUrl = external.externalUrl
    }
    if (Object.keys(patch.fields).length > 0) {
      const fields = { ...before.fields }
      for (const [handle, value] of Object.entries(patch.fields)) {
        if (value === null) delete fields[handle]
        else fields[handle] = value
      }
      columns.fields = fields
    }
    const target = patch.status
    if (target === undefined || target === before.status) return { columns, history: null, claimOrderAdvance: null }
    columns.status = target
    // Only a cancellation with the order remembers what to restore; any other move forgets it.
    columns.statusBeforeOrderCancel = statusBeforeOrderCancel
    if (target === 'shipped' && !before.dateShipped) columns.dateShipped = external?.shippedAt ?? now
    return {
      columns,
      history: {
        fromStatus: before.status,
        toStatus: target,
        message: patch.statusMessage,
        userId,
        sourceIntegration: patch.integrationHandle,
        sourceExternalCode: patch.externalCode,
        createdAt: now,
      },
      claimOrderAdvance: target === 'shipped' ? deps.shippedOrderStatus : null,
    }
  }

  /** A plan that writes nothing new (the row moved on since the order sync read it). */
  const unchanged = (before: ShipmentRow): ShipmentChangePlan => ({ columns: { updatedAt: before.updatedAt }, history: null, claimOrderAdvance: null })

  return { planChange, unchanged }
}

export type ShipmentUpdatePlan = ReturnType<typeof createUpdatePlan>
