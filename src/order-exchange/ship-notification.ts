// A ship notification (spec 4.4): its parameters checked, its order found (a split order by the OrderID
// the notice names), the order moved to the Status Handle with its tracking, its open shipments shipped
// (opt-in), the parcel of its tracking number shipped; a notice with items goes through
// ship-notification-items.ts. The same notification twice leaves the state of once.
import { inSpan } from '../telemetry.js'
import { OrderExchangeErrors } from '../errors.js'
import type { OrderSummary } from '../order-store.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import { blankShipNotifySettings } from './settings.js'
import type { ShipNotifyParameters } from './ship-notice.js'
import { readNoticeItems } from './notified-items.js'
import type { OrderExchangeContext, TrackingValues } from './exchange-context.js'
import type { NotifiedItemsShipping } from './ship-notification-items.js'

const SHIP_NOTIFY_PARAMETER_NAMES: ReadonlyArray<[Exclude<keyof ShipNotifyParameters, 'items'>, string]> = [
  ['orderNumber', 'order_number'],
  ['carrier', 'carrier'],
  ['service', 'service'],
  ['trackingNumber', 'tracking_number'],
  ['orderId', 'OrderID'],
]

export function createShipNotification(shared: OrderExchangeContext, { shipNotifiedItems }: Pick<NotifiedItemsShipping, 'shipNotifiedItems'>) {
  const { deps, shipOpenShipments, announce, recordOnOrder } = shared
  const { settings, orderStore, logger } = deps

  async function findNotifiedOrder(parameters: ShipNotifyParameters): Promise<OrderSummary> {
    const orderNumber = parameters.orderNumber!
    const order = await orderStore.findOrderByReference(orderNumber)
    if (order) return order
    // A split order arrives under a number the store does not know; the ShipNotice still names the original.
    const orderId = parameters.orderId && /^\d{1,15}$/.test(parameters.orderId) ? Number(parameters.orderId) : null
    const original = orderId !== null ? await orderStore.findOrder(orderId) : null
    if (original) {
      logger.info({ orderNumber, orderId }, 'Ship notification for an unknown order number applied to the order its OrderID names')
      return original
    }
    throw new OrderExchangeErrors.OrderNotFound(orderNumber)
  }

  /**
   * Applies a ship notification (spec 4.4), in its span (`shipments.exchange.ship_notify`); the same
   * notification twice leaves the state of once.
   */
  function shipNotify(given: ShipNotifyParameters): Promise<void> {
    return inSpan('shipments.exchange.ship_notify', {}, async () => {
      const checked = await checkedNotification(given)
      await applyNotification(checked)
    })
  }

  /**
   * A ship notification checked as it would be applied (its parameters, its items, the settings, the
   * order it names) and not applied: the connection doctor's dry run. Answers the order's reference.
   */
  async function checkShipNotify(given: ShipNotifyParameters): Promise<string> {
    return (await checkedNotification(given)).order.reference
  }

  async function checkedNotification(given: ShipNotifyParameters) {
    // Trimmed here too, so a host's direct call reads its values as the route does.
    const parameters = Object.fromEntries(
      Object.entries(given).map(([key, value]) => [key, typeof value === 'string' ? value.trim() : value]),
    ) as unknown as ShipNotifyParameters
    if (!parameters.orderNumber) throw new OrderExchangeErrors.MissingOrderNumber()
    // The values are stored on the order (and its shipments): the text rule of every stored text.
    for (const [key, name] of SHIP_NOTIFY_PARAMETER_NAMES) {
      const value = parameters[key]
      const problem = value ? textProblem(value, { maxLength: TEXT_LIMITS.short }) : null
      if (problem) throw new OrderExchangeErrors.InvalidParameter(name, problem)
    }
    // Items are read only where they are applied: with updateShipments, on an order store that gives lines.
    const noticeItems = settings.updateShipments && orderStore.orderLines ? readNoticeItems(parameters.items) : []
    const blank = blankShipNotifySettings(settings)
    if (blank.length > 0) {
      logger.error({ settings: blank }, 'Ship notification refused: settings are blank')
      throw new OrderExchangeErrors.ShipNotifyFailed()
    }
    if (!orderStore.recordShipNotification) throw new Error('The order store does not implement recordShipNotification().')
    const order = await findNotifiedOrder(parameters)
    return { parameters, noticeItems, order }
  }

  async function applyNotification({ parameters, noticeItems, order }: Awaited<ReturnType<typeof checkedNotification>>): Promise<void> {

    const values: TrackingValues = { carrier: parameters.carrier ?? '', service: parameters.service ?? '', trackingNumber: parameters.trackingNumber ?? '' }
    const hasTracking = Object.values(values).some((value) => value !== '')
    const change = {
      statusHandle: settings.shippedStatus,
      tracking: hasTracking
        ? {
            fieldHandle: settings.tracking.matrix,
            values: {
              [settings.tracking.carrier]: values.carrier,
              [settings.tracking.service]: values.service,
              [settings.tracking.trackingNumber]: values.trackingNumber,
            },
          }
        : null,
    }
    const shipmentTracking = Object.fromEntries(Object.entries(values).filter(([, value]) => value !== ''))
    if (noticeItems.length > 0 && (await shipNotifiedItems(order, noticeItems, change, values, shipmentTracking))) return shipParcel(values)

    // The order first: a Status Handle that names no status fails before anything has changed.
    const result = await recordOnOrder(order, change)
    const shipmentIds = settings.updateShipments ? await shipOpenShipments(order, shipmentTracking) : []
    // Shipped shipments may have advanced the order to `shippedOrderStatus`; the notification's
    // Status Handle is the one that stays (spec 3.6). A no-op when the advance did not happen.
    if (shipmentIds.length > 0) await recordOnOrder(order, change)
    await announce(order, result, values, shipmentIds, null)
    await shipParcel(values)
  }

  /**
   * The parcel whose label carries the notice's tracking number is shipped too (its history says by
   * ShipStation), after the shipments: a notice sent again finds it shipped and writes nothing.
   */
  async function shipParcel(values: TrackingValues): Promise<void> {
    if (!deps.parcels || values.trackingNumber === '') return
    await deps.parcels.track({ trackingNumber: values.trackingNumber, status: 'shipped', code: 'shipnotify', integration: settings.integrationHandle })
  }

  return { shipNotify, checkShipNotify }
}
