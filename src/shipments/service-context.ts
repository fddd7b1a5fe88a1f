// What the shipment service's concerns (updates.ts, allocation.ts, reads.ts) share: the service's
// dependencies, a row as presented, the attention list, and the reads of a shipment and of its order's
// lines that more than one concern makes. Rule: it knows none of the concerns; they import it, and
// what one concern needs of another is passed to its factory, never imported.
import type { FastifyBaseLogger } from 'fastify'
import { holdsAllocation, type AllocationExceededError, type DataLayer, type NewOutboxMessage, type ShipmentRow, type StoredShipmentItem } from '../db/data-layer.js'
import type { CheckpointRow } from '../db/checkpoints.js'
import { ShipmentsErrors, ShipmentValidationError } from '../errors.js'
import type { OutboxDispatcher } from '../outbox/dispatcher.js'
import type { OrderLine, OrderStore } from '../order-store.js'
import type { DetectedCarrier } from './carriers.js'
import { exceedsOrdered, storedItems, type ShipmentItemInput, type SplitRule } from '../model/items.js'
import type { ShipmentFieldDefinition } from './field-layout.js'
import { createAttentionList } from './attention.js'
import { toShipment } from '../model/shipment.js'
import { milestoneOf, newCheckpointRow, toCheckpoint, type CheckpointInput } from '../model/checkpoints.js'

/** The scans a tracking service reported for a shipment (or one of its parcels, by id). */
export interface ScansToKeep {
  trackingNumber: string
  /** The integration (handle) that reported them. */
  source: string
  parcelId?: number | null | undefined
  checkpoints: readonly CheckpointInput[]
}

export interface ShipmentServiceDependencies {
  data: DataLayer
  /** Delivers the events and jobs a change wrote to the outbox, right after its commit. */
  dispatcher: Pick<OutboxDispatcher, 'claim' | 'deliver'>
  orderStore: OrderStore
  logger: FastifyBaseLogger
  timeZone: string
  shipmentFields: ShipmentFieldDefinition[]
  shippedOrderStatus: string | null
  /**
   * The order store is the package's reference store, on the same database: the order advance a move to
   * shipped causes is applied in the change's own transaction instead of by an outbox job afterwards.
   */
  referenceStore?: boolean | undefined
  lockTimeoutMs: number
  /** Milliseconds since the epoch: relative dates and the times an update writes. */
  clock: () => number
  /** Order statuses that cancel an order's open shipments (see `orderStatusChanged`). */
  cancelWithOrderStatuses: readonly string[]
  /** Host split rules by name, beside the built-in ones. */
  splitRules: Readonly<Record<string, SplitRule>>
  /**
   * The full-coverage rule: true, the order advances only when its shipped shipments hold every
   * shippable line in full; 'itemized', the same once one of its shipments holds lines (an order shipped
   * as order-level shipments only advances as a whole); false, when every enabled shipment is shipped.
   */
  requireFullCoverage: boolean | 'itemized'
  /** The carrier and tracking page of a tracking number, or null (see carriers.ts). */
  detectCarrier: (trackingNumber: string) => DetectedCarrier | null
}

export const shipmentKey = (id: number) => `shipment:${id}`

/** An over-allocation as the 422 of the line it names. */
export const allocationRefusal = (error: AllocationExceededError) =>
  new ShipmentValidationError({ [`items.${error.item.lineItemId}`]: [error.message] }, { cause: error })

/** Neither shipped nor cancelled: what cancelling with the order may cancel. */
export const isOpen = (row: Pick<ShipmentRow, 'status'>) => row.status !== 'shipped' && row.status !== 'cancelled'

/** The shared part of one shipment service: built once, handed to each concern's factory. */
export function createShipmentServiceContext(deps: ShipmentServiceDependencies) {
  const { data, orderStore, timeZone } = deps
  const present = (shipment: ShipmentRow) => toShipment(shipment, timeZone)
  const attentionList = createAttentionList({ data, orderStore, clock: deps.clock })

  async function requireRow(id: number): Promise<ShipmentRow> {
    const row = Number.isSafeInteger(id) ? await data.findShipment(id) : undefined
    if (!row) throw new ShipmentsErrors.ShipmentNotFound(id)
    return row
  }

  /** The order's lines from the order store; a 422 on `items` when the store cannot give lines. */
  async function requireOrderLines(orderId: number): Promise<OrderLine[]> {
    const lines = orderStore.orderLines ? await orderStore.orderLines(orderId) : null
    if (!lines) throw new ShipmentValidationError({ items: ['The order store gives no lines for this order: its shipments are order-level.'] })
    return lines
  }

  /**
   * The request's items as stored, against the order's lines. Only a refusal (more than was ordered)
   * reads what the order's other active shipments hold: its message says what is left, in the words of
   * the allocation check, so creating and updating refuse alike.
   */
  async function itemsOfOrder(orderId: number, items: readonly ShipmentItemInput[], holder?: ShipmentRow): Promise<StoredShipmentItem[]> {
    const lines = await requireOrderLines(orderId)
    if (!exceedsOrdered(items, lines)) return storedItems(items, lines)
    const held = new Map((await data.allocations([orderId])).get(orderId))
    if (holder && holdsAllocation(holder)) for (const item of holder.items) held.set(item.lineItemId, (held.get(item.lineItemId) ?? 0) - item.quantity)
    return storedItems(items, lines, held)
  }

  /** The order's shippable lines and their quantities, for the full-coverage rule (none without lines). */
  async function shippableLines(orderId: number): Promise<Map<number, number>> {
    const lines = (orderStore.orderLines ? await orderStore.orderLines(orderId) : null) ?? []
    return new Map(lines.filter((line) => line.shippable).map((line) => [line.id, line.quantity]))
  }

  /**
   * The checkpoint rows of the scans, and the event of those added: the newest new scan that is a
   * milestone is a `carrierMilestone` (notifications follow it), so a full history arriving at once (a
   * tracker first seen when delivered) sends one notice.
   */
  function checkpointsOf(shipmentId: number, scans: ScansToKeep) {
    return {
      rows: scans.checkpoints.map((checkpoint) => newCheckpointRow(shipmentId, scans.parcelId ?? null, scans.trackingNumber, scans.source, checkpoint)),
      messages: (added: CheckpointRow[], shipment: ShipmentRow): NewOutboxMessage[] => {
        const newest = added
          .filter((row) => milestoneOf(row) !== null)
          .sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime() || a.id - b.id)
          .at(-1)
        if (!newest) return []
        return [{ kind: 'event', name: 'carrierMilestone', orderingKey: shipmentKey(shipmentId), payload: { shipment: present(shipment), milestone: milestoneOf(newest)!, checkpoint: toCheckpoint(newest, timeZone) } }]
      },
    }
  }

  return { deps, present, attentionList, requireRow, requireOrderLines, itemsOfOrder, shippableLines, checkpointsOf }
}

export type ShipmentServiceContext = ReturnType<typeof createShipmentServiceContext>
