// The order exchange with ShipStation (spec 4.3, 4.4): one export page, one ship notification.
import type { FastifyBaseLogger } from 'fastify'
import { OrderExchangeErrors, ShipmentValidationError } from '../errors.js'
import type { OutboxDispatcher } from '../outbox/dispatcher.js'
import type { OrderStore, OrderSummary, ShipNotificationChange, ShipNotificationResult } from '../orders/order-store.js'
import { UnknownOrderStatusError } from '../orders/reference-store.js'
import type { ShipmentService } from '../shipments/service.js'
import type { ParcelTracking } from '../gateway/providers.js'
import type { Shipment } from '../shipments/shipment.js'
import { AllocationExceededError, LockTimeoutError } from '../db/data-layer.js'
import { parsePlatformDate } from '../time.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import { renderExportDocument } from './export-document.js'
import { blankShipNotifySettings, type OrderExchangeSettings } from './settings.js'
import type { ShipNotifyParameters } from './ship-notice.js'
import { planNotifiedItems, readNoticeItems, type NoticeItem, type NotifiedItemsPlan } from './notified-items.js'
import type { ExchangeActivityLog } from './activity-log.js'

export interface ExportRequest {
  startDate?: string | undefined
  endDate?: string | undefined
  page?: string | undefined
  store?: string | undefined
  /** The origin of the request, for relative image URLs when no `siteUrl` is set. */
  origin: string
}

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

export type OrderExchangeService = ReturnType<typeof createOrderExchangeService>

const MINUTE = 60_000
/** How many times a notice with items is planned when other requests keep taking its units meanwhile. */
const PLAN_ROUNDS = 3

/** A notification's tracking values, '' when not sent. */
type TrackingValues = { carrier: string; service: string; trackingNumber: string }

/** `page`: 1-based; below 1 or not a number is 1 (spec 4.3). */
export function pageParameter(raw: string | undefined): number {
  const digits = raw === undefined ? null : /^\s*\+?(\d+)(?:\.\d*)?\s*$/.exec(raw)
  const page = digits ? Number(digits[1]) : 1
  return page < 1 ? 1 : Math.min(page, Number.MAX_SAFE_INTEGER)
}

const SHIP_NOTIFY_PARAMETER_NAMES: ReadonlyArray<[Exclude<keyof ShipNotifyParameters, 'items'>, string]> = [
  ['orderNumber', 'order_number'],
  ['carrier', 'carrier'],
  ['service', 'service'],
  ['trackingNumber', 'tracking_number'],
  ['orderId', 'OrderID'],
]

export function createOrderExchangeService(deps: OrderExchangeDependencies) {
  const { settings, orderStore, shipments, dispatcher, logger, timeZone } = deps

  /**
   * The date window of spec 4.3 rules 2 to 4: both dates or none, parsed in the site timezone, the
   * start floored to its minute and the end at second 59 of its minute, both exclusive.
   */
  function exportWindow(startDate: string | undefined, endDate: string | undefined) {
    if (!startDate?.trim() || !endDate?.trim()) return null
    const start = parsePlatformDate(startDate, timeZone)
    if (start === null) throw new OrderExchangeErrors.InvalidDate('start_date')
    const end = parsePlatformDate(endDate, timeZone)
    if (end === null) throw new OrderExchangeErrors.InvalidDate('end_date')
    return { after: Math.floor(start / MINUTE) * MINUTE, before: Math.floor(end / MINUTE) * MINUTE + 59_000 }
  }

  /** One page of the export document. */
  async function exportPage(request: ExportRequest): Promise<string> {
    return (await exportDocument(request)).xml
  }

  /** One page of the export document and how many orders it holds. */
  async function exportDocument(request: ExportRequest): Promise<{ xml: string; orders: number }> {
    if (!orderStore.exportOrders) throw new Error('The order store does not implement exportOrders().')
    const pageSize = settings.pageSize
    const storeValue = request.store?.trim()
    const { orders, total } = await orderStore.exportOrders({
      window: exportWindow(request.startDate, request.endDate),
      store: settings.storeField && storeValue ? { fieldHandle: settings.storeField, value: storeValue } : null,
      page: pageParameter(request.page),
      pageSize,
      includeInvalid: settings.failOnValidation,
    })
    const invalid = orders.filter((order) => order.problems.length > 0)
    if (invalid.length > 0) {
      logger.error(
        { orders: invalid.map((order) => ({ id: order.id, reference: order.reference, problems: order.problems })) },
        'ShipStation export failed: orders failed validation',
      )
      throw new OrderExchangeErrors.ExportFailed()
    }
    const xml = renderExportDocument(orders, Math.ceil(total / pageSize), { timeZone, siteUrl: settings.siteUrl ?? request.origin })
    return { xml, orders: orders.length }
  }

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

  /** Applies a ship notification (spec 4.4); the same notification twice leaves the state of once. */
  async function shipNotify(given: ShipNotifyParameters): Promise<void> {
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
    const shipping = { status: 'shipped', ...tracking, statusMessage: 'Shipped in ShipStation.', ...source }
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
          take.items.length > 0 ? { items: take.items } : { status: 'cancelled', statusMessage: 'Its items were shipped in another ShipStation package.', ...source },
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

  async function recordOnOrder(order: OrderSummary, change: ShipNotificationChange) {
    try {
      return await orderStore.recordShipNotification!(order.id, change)
    } catch (error) {
      const reason = error instanceof UnknownOrderStatusError ? 'the Status Handle names no order status' : 'the order could not be saved'
      logger.error({ err: error, orderId: order.id, statusHandle: change.statusHandle }, `Ship notification failed: ${reason}`)
      throw new OrderExchangeErrors.ShipNotifyFailed()
    }
  }

  return {
    exportPage,
    exportDocument,
    shipNotify,
    /** The settings in force (the password included: never show or log it). */
    settings,
    /** The log of the exchange's requests: what ShipStation asked, what it got, why it was refused. */
    activity: deps.activity,
  }
}
