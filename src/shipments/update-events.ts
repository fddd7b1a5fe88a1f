// The outbox messages a committed change writes in its own transaction: the status change (with its
// history row's id), the moved delivery estimate, the order's attention row decided again, and the
// order-advance job (order-advance.ts).
import type { NewOutboxMessage, ShipmentRow } from '../db/data-layer.js'
import { parseIsoDateTime } from '../time.js'
import type { Shipment } from '../model/shipment.js'
import type { ShipmentPatch } from './update-input.js'
import { shipmentKey, type ShipmentServiceContext } from './service-context.js'
import { ORDER_ADVANCE_JOB } from './order-advance.js'

export function createUpdateEvents(shared: ShipmentServiceContext) {
  const { deps } = shared
  const { timeZone } = deps
  const { keepsAttention, attentionRefresh } = shared.attentionList

  /** The `estimateChanged` event of a change that moved the shipment's delivery estimate. */
  function estimateMessage(row: ShipmentRow, change: { from: string | null; to: string | null }, presented: (row: ShipmentRow) => Shipment): NewOutboxMessage {
    const from = change.from === null ? null : parseIsoDateTime(change.from, timeZone)
    const to = change.to === null ? null : parseIsoDateTime(change.to, timeZone)
    return {
      kind: 'event',
      name: 'estimateChanged',
      orderingKey: shipmentKey(row.id),
      payload: { shipment: presented(row), from: change.from, to: change.to, source: row.estimatedDeliverySource, movedLater: from !== null && to !== null && to > from },
    }
  }

  /** The events (and the order advance) a committed change causes, written in its transaction. */
  function changeMessages(
    outcome: { row: ShipmentRow; previousStatus: string; historyId: number | null; orderAdvanceClaimed: boolean; orderAdvanced: boolean },
    patch: ShipmentPatch,
    userId: string | null,
    presented: (row: ShipmentRow) => Shipment,
  ): NewOutboxMessage[] {
    const messages: NewOutboxMessage[] = []
    if (outcome.historyId !== null) {
      messages.push({
        kind: 'event',
        name: 'shipmentStatusChanged',
        orderingKey: shipmentKey(outcome.row.id),
        payload: {
          shipment: presented(outcome.row),
          from: outcome.previousStatus,
          to: outcome.row.status,
          message: patch.statusMessage,
          historyId: outcome.historyId,
          userId,
          sourceIntegration: patch.integrationHandle,
          externalCode: patch.externalCode,
        },
      })
    }
    // What the order's active shipments hold changed: its attention row is decided again.
    const allocationChanged =
      patch.columns.items !== undefined ||
      patch.columns.enabled !== undefined ||
      (outcome.historyId !== null && (outcome.previousStatus === 'cancelled' || outcome.row.status === 'cancelled'))
    if (allocationChanged && keepsAttention) messages.push(attentionRefresh(outcome.row.orderId))
    if (outcome.orderAdvanced && deps.shippedOrderStatus !== null) {
      // The reference store's order took its status in the change's own transaction: only the event is left.
      const { orderId } = outcome.row
      messages.push({ kind: 'event', name: 'orderAdvanced', orderingKey: `order:${orderId}`, payload: { orderId, status: deps.shippedOrderStatus, shipmentId: outcome.row.id } })
    } else if (outcome.orderAdvanceClaimed && deps.shippedOrderStatus !== null) {
      const { orderId } = outcome.row
      messages.push({
        kind: 'job',
        name: ORDER_ADVANCE_JOB,
        orderingKey: `order:${orderId}`,
        payload: { orderId, status: deps.shippedOrderStatus, shipmentId: outcome.row.id },
      })
    }
    return messages
  }

  return { changeMessages, estimateMessage }
}

export type ShipmentUpdateEvents = ReturnType<typeof createUpdateEvents>
