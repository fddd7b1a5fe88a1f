// A ship notification with items (with `updateShipments`): the lines it names planned against the
// order's shipments (notified-items.ts) and shipped exactly, under the order's lock, planned again when
// another request took the units meanwhile.
import { OrderExchangeErrors, ShipmentValidationError } from '../errors.js'
import type { OrderSummary, ShipNotificationChange, ShipNotificationResult } from '../order-store.js'
import type { Shipment } from '../model/shipment.js'
import { AllocationExceededError, LockTimeoutError } from '../db/data-layer.js'
import { planNotifiedItems, type NoticeItem, type NotifiedItemsPlan } from './notified-items.js'
import type { OrderExchangeContext, TrackingValues } from './exchange-context.js'

/** How many times a notice with items is planned when other requests keep taking its units meanwhile. */
const PLAN_ROUNDS = 3

export function createNotifiedItemsShipping(shared: OrderExchangeContext) {
  const { deps, shipOpenShipments, announce, recordOnOrder } = shared
  const { settings, orderStore, shipments, logger } = deps

  /**
   * A notification with items (with `updateShipments`) ships exactly the lines it names, holding the
   * order's lock so a notification sent twice at once ships once (see planNotifiedItems). The order moves
   * to the Status Handle, and its other open shipments ship as without items, only when nothing is left
   * to ship after it. false when no item names a shippable line of the order: the notification is then
   * one for the whole order.
   */
  async function shipNotifiedItems(
    order: OrderSummary,
    noticeItems: NoticeItem[],
    change: ShipNotificationChange,
    values: TrackingValues,
    shipmentTracking: Record<string, string>,
  ): Promise<boolean> {
    const applied = async () => {
      let plan: NotifiedItemsPlan | null = null
      let result: ShipNotificationResult | null = null
      let shipped: { moved: number[]; changed: boolean } | null = null
      // The plan is made under the notice's lock, but shipments are created and allocated under the
      // order's own lock, by every instance: units another instance allocated between this plan and its
      // write are planned again (they are then nothing left, reported, never a 500 ShipStation retries).
      for (let round = 1; shipped === null; round++) {
        const lines = await orderStore.orderLines!(order.id)
        plan = lines ? planNotifiedItems(noticeItems, lines, await orderShipments(order.id), values.trackingNumber) : null
        if (!plan) {
          logger.info({ orderId: order.id, items: noticeItems }, 'Ship notification: no item names a shippable line of the order; applied to the whole order')
          return false
        }
        // As without items, the order first: a Status Handle that names no status fails before any shipment moves.
        if (plan.completesOrder && result === null) result = await recordOnOrder(order, change)
        shipped = await applyItemsPlan(order, plan, shipmentTracking, round < PLAN_ROUNDS)
      }
      plan = plan!
      if (plan.notShipped.length > 0) {
        logger.warn({ orderId: order.id, notShipped: plan.notShipped }, 'Ship notification: units not shipped (more than was left of a line, or no such line)')
      }
      const others = plan.completesOrder ? await shipOpenShipments(order, shipmentTracking) : []
      const shipmentIds = [...shipped.moved, ...others]
      if (plan.completesOrder && shipmentIds.length > 0) await recordOnOrder(order, change)
      await announce(order, result, values, shipmentIds, { plan, changed: shipped.changed })
      return true
    }
    try {
      return await deps.lockOrder(order.id, applied)
    } catch (error) {
      if (!(error instanceof LockTimeoutError)) throw error
      logger.error({ orderId: order.id }, 'Ship notification failed: another notification for the order held its lock too long')
      throw new OrderExchangeErrors.ShipNotifyFailed()
    }
  }

  /** Every shipment of the order that is not deleted, whatever its state. */
  async function orderShipments(orderId: number): Promise<Shipment[]> {
    const found: Shipment[] = []
    for (let page = 1; ; page++) {
      const batch = await shipments.list({ orderId, page, perPage: 100 })
      found.push(...batch.shipments)
      if (page * batch.perPage >= batch.total) return found
    }
  }

  /**
   * Applies the plan through the one update path (history, events, outbox): units taken from open
   * shipments first (one emptied is cancelled), then the shipment that ships them. A failure is a 500,
   * so ShipStation reports it; sent again, the notification finds what was done and does the rest.
   */
  async function applyItemsPlan(order: OrderSummary, plan: NotifiedItemsPlan, tracking: Record<string, string>, mayPlanAgain: boolean): Promise<{ moved: number[]; changed: boolean } | null> {
    const source = { integrationHandle: settings.integrationHandle, externalCode: 'shipnotify' }
    const shipping = { status: 'shipped' as const, ...tracking, statusMessage: 'Shipped in ShipStation.', ...source }
    // Shipping part of the order never completes it: its own advance waits until every line has shipped.
    const context = { requireFullCoverage: true }
    try {
      if (plan.action === 'repeat' || plan.action === 'nothing-left') return { moved: [], changed: false }
      if (plan.action === 'ship-holder') {
        const result = await shipments.update(plan.shipmentId, shipping, context)
        return { moved: result.transition ? [plan.shipmentId] : [], changed: result.transition !== null }
      }
      for (const take of plan.takeFrom) {
        await shipments.update(
          take.shipmentId,
          take.items.length > 0 ? { items: take.items } : { status: 'cancelled' as const, statusMessage: 'Its items were shipped in another ShipStation package.', ...source },
        )
      }
      const { orderLevelShipmentId } = plan
      const id = orderLevelShipmentId ?? (await shipments.create(order.id, { items: plan.ships }))[0].id
      const result = await shipments.update(id, orderLevelShipmentId === null ? shipping : { ...shipping, items: plan.ships }, context)
      return { moved: result.transition ? [id] : [], changed: true }
    } catch (error) {
      const takenMeanwhile = error instanceof ShipmentValidationError && error.cause instanceof AllocationExceededError
      if (takenMeanwhile && mayPlanAgain) {
        logger.info({ orderId: order.id, reason: (error.cause as Error).message }, 'Ship notification: units were allocated by another request meanwhile; planning again')
        return null
      }
      logger.error({ err: error, orderId: order.id, plan }, 'Ship notification failed: its items could not be shipped')
      throw new OrderExchangeErrors.ShipNotifyFailed()
    }
  }

  return { shipNotifiedItems }
}

export type NotifiedItemsShipping = ReturnType<typeof createNotifiedItemsShipping>
