// What the order exchange's concerns (order-export.ts, ship-notification.ts, ship-notification-items.ts)
// share: the exchange's dependencies, and the steps a ship notification takes with or without items (the
// order's status, its open shipments shipped, the event announced). Rule: it knows none of the concerns;
// what one concern needs of another is passed to its factory, never imported.
import type { FastifyBaseLogger } from 'fastify'
import { OrderExchangeErrors } from '../errors.js'
import type { OutboxDispatcher } from '../outbox/dispatcher.js'
import type { OrderStore, OrderSummary, ShipNotificationChange, ShipNotificationResult } from '../order-store.js'
import { UnknownOrderStatusError } from '../orders/reference-store.js'
import type { ShipmentService } from '../shipments/service.js'
import type { ParcelTracking } from '../gateway/providers.js'
import type { OrderExchangeSettings } from './settings.js'
import type { NotifiedItemsPlan } from './notified-items.js'
import type { ExchangeActivityLog } from './activity-log.js'

export interface OrderExchangeDependencies {
  settings: OrderExchangeSettings
  orderStore: OrderStore
  shipments: ShipmentService
  dispatcher: Pick<OutboxDispatcher, 'publish'>
  logger: FastifyBaseLogger
  timeZone: string
  /** Where every request of the exchange is recorded (the route writes it). */
  activity: ExchangeActivityLog
  /**
   * Runs a notification with items holding the order's lock across processes and instances, so the same
   * notification sent twice at once ships once.
   */
  lockOrder: <T>(orderId: number, task: () => Promise<T>) => Promise<T>
  /** Moves the parcel that holds a notice's tracking number (deliveries), as tracking events do. */
  parcels?: ParcelTracking | undefined
}

/** A notification's tracking values, '' when not sent. */
export type TrackingValues = { carrier: string; service: string; trackingNumber: string }

/** The shared part of one order exchange: built once, handed to each concern's factory. */
export function createOrderExchangeContext(deps: OrderExchangeDependencies) {
  const { settings, orderStore, shipments, dispatcher, logger } = deps

  /** Open shipments of the order move to shipped, through the one update path (opt-in). */
  async function shipOpenShipments(order: OrderSummary, tracking: Record<string, string>): Promise<number[]> {
    const moved: number[] = []
    for (let page = 1; ; page++) {
      const batch = await shipments.list({ orderId: order.id, page, perPage: 100 })
      for (const shipment of batch.shipments) {
        if (!shipment.enabled || shipment.status === 'shipped' || shipment.status === 'cancelled') continue
        try {
          const result = await shipments.update(shipment.id, {
            status: 'shipped',
            ...tracking,
            statusMessage: 'Shipped in ShipStation.',
            integrationHandle: settings.integrationHandle,
            externalCode: 'shipnotify',
          })
          if (result.transition) moved.push(shipment.id)
        } catch (error) {
          logger.error({ err: error, shipmentId: shipment.id, orderId: order.id }, 'A ship notification could not move a shipment to shipped')
        }
      }
      if (page * batch.perPage >= batch.total) return moved
    }
  }

  /**
   * Logs a skipped tracking entry, and writes the event when the notification changed anything or
   * named units it could not ship (those are never dropped silently, even when nothing else changed).
   */
  async function announce(
    order: OrderSummary,
    result: ShipNotificationResult | null,
    values: TrackingValues,
    shipmentIds: number[],
    items: { plan: NotifiedItemsPlan; changed: boolean } | null,
  ) {
    if (result?.trackingSkipped) {
      logger.warn({ orderId: order.id, reason: result.trackingSkipped }, 'Ship notification: tracking entry skipped')
    }
    if (!result?.changed && shipmentIds.length === 0 && !items?.changed && !(items && items.plan.notShipped.length > 0)) return
    const hasTracking = Object.values(values).some((value) => value !== '')
    // The order store may be the host's, whose transaction the package does not share: the event is
    // written to the outbox right after the store's commit (the one event not written with its change).
    await dispatcher.publish([
      {
        kind: 'event',
        name: 'shipNotificationRecorded',
        orderingKey: `order:${order.id}`,
        payload: {
          orderId: order.id,
          orderReference: order.reference,
          status: settings.shippedStatus,
          tracking: hasTracking ? values : null,
          shipmentIds,
          ...(items && { items: { shipped: items.plan.ships, notShipped: items.plan.notShipped, orderComplete: items.plan.completesOrder } }),
        },
      },
    ])
  }

  async function recordOnOrder(order: OrderSummary, change: ShipNotificationChange) {
    try {
      return await orderStore.recordShipNotification!(order.id, change)
    } catch (error) {
      const reason = error instanceof UnknownOrderStatusError ? 'the Status Handle names no order status' : 'the order could not be saved'
      logger.error({ err: error, orderId: order.id, statusHandle: change.statusHandle }, `Ship notification failed: ${reason}`)
      throw new OrderExchangeErrors.ShipNotifyFailed()
    }
  }

  return { deps, shipOpenShipments, announce, recordOnOrder }
}

export type OrderExchangeContext = ReturnType<typeof createOrderExchangeContext>
