// The shipment service: the one update path every change goes through (API, gateway, ShipStation).
import type { FastifyBaseLogger } from 'fastify'
import {
  LockTimeoutError,
  ShipmentMissingError,

  type DataLayer,
  type NewOutboxMessage,
  type ShipmentChangePlan,
  type ShipmentColumns,
  type ShipmentRow,
} from '../db/data-layer.js'
import { ShipmentsErrors, ShipmentUpdateRejectedError } from '../errors.js'
import { shortError, type JobHandler, type OutboxDispatcher } from '../outbox/dispatcher.js'
import type { OrderStore } from '../orders/order-store.js'
import type { ShipmentFieldDefinition } from './field-layout.js'
import { toHistoryEntry, toShipment, type Shipment, type ShipmentHistoryEntry, type ShipmentStatus } from './shipment.js'
import { parseShipmentUpdate, type ShipmentPatch, type ShipmentUpdateInput } from './update-input.js'

export interface UpdateContext {
  /** The user making the change, recorded on the history row. */
  userId?: string | null
  /**
   * Called under the shipment's mutex (its in-process queue; no database lock is held) when the status
   * really changes, with the status read then, and again if another process moves the shipment before
   * the write; throw to refuse the transition (the API checks the transition permission here).
   */
  authorizeTransition?: (from: ShipmentStatus, to: ShipmentStatus) => void | Promise<void>
  /**
   * The update is an integration's event: it is applied under the shipment's lock, and only when it
   * is not older than the last event applied from that integration, so late deliveries never move a
   * shipment back.
   */
  externalEvent?: ExternalEvent
}

export interface ExternalEvent {
  integrationId: number
  occurredAt: Date
  /** The shipment's id and page at the integration, kept as its external reference. */
  externalId?: string | null
  externalUrl?: string | null
}

export interface UpdateResult {
  shipment: Shipment
  /** The transition applied, or null when the status did not change. */
  transition: { from: ShipmentStatus; to: ShipmentStatus; historyId: number } | null
  /** True when an external event was older than the last one applied, and so changed nothing. */
  stale: boolean
}

export interface OrderSyncResult {
  /** What the order's new status asked for. */
  action: 'cancelled' | 'restored'
  /** The shipments moved, as they are now. */
  shipments: Shipment[]
}

export interface ListShipmentsQuery {
  orderId?: number
  status?: ShipmentStatus
  /** Shipments whose reference contains this text, case-insensitive (an order's reference finds its shipments). */
  search?: string
  includeDeleted?: boolean
  page?: number
  perPage?: number
}

export interface ShipmentPage {
  shipments: Shipment[]
  total: number
  page: number
  perPage: number
}

export interface CreateShipmentsOptions {
  /** How many shipments to create. Default 1. */
  count?: number
  userId?: string | null
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
  lockTimeoutMs: number
  /** Milliseconds since the epoch: relative dates and the times an update writes. */
  clock: () => number
  /** Order statuses that cancel an order's open shipments (see `orderStatusChanged`). */
  cancelWithOrderStatuses: readonly string[]
}

/** The messages that cancel and restore shipments with their order write on the history. */
export const CANCELLED_WITH_ORDER = 'Cancelled with the order.'
export const RESTORED_WITH_ORDER = 'Restored with the order.'

/** The outbox job that applies the order advance; retried until the order store takes it. */
export const ORDER_ADVANCE_JOB = 'orderAdvance'

const shipmentKey = (id: number) => `shipment:${id}`

export type ShipmentService = ReturnType<typeof createShipmentService>


export function createShipmentService(deps: ShipmentServiceDependencies) {
  const { data, dispatcher, orderStore, logger, timeZone } = deps
  const fieldsByHandle = new Map(deps.shipmentFields.map((field) => [field.handle, field]))
  const present = (shipment: ShipmentRow) => toShipment(shipment, timeZone)

  async function requireRow(id: number): Promise<ShipmentRow> {
    const row = Number.isSafeInteger(id) ? await data.findShipment(id) : undefined
    if (!row) throw new ShipmentsErrors.ShipmentNotFound(id)
    return row
  }

  /** What the patch writes to the shipment as it is now (read inside the write transaction). */
  function planChange(before: ShipmentRow, patch: ShipmentPatch, userId: string | null, statusBeforeOrderCancel: string | null = null): ShipmentChangePlan {
    const now = new Date(deps.clock())
    const columns: ShipmentColumns = { ...patch.columns, updatedAt: now }
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
    if (target === 'shipped' && !before.dateShipped) columns.dateShipped = now
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

  /** The events (and the order advance) a committed change causes, written in its transaction. */
  function changeMessages(
    outcome: { row: ShipmentRow; previousStatus: string; historyId: number | null; orderAdvanceClaimed: boolean },
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
    if (outcome.orderAdvanceClaimed && deps.shippedOrderStatus !== null) {
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

  /**
   * The order advance, as an outbox job: retried (1 s, doubling, at most an hour apart) until the order
   * store takes it, so no crash or store failure leaves an order behind; setting the same status twice
   * is harmless, and its orderAdvanced event is written once (its id derives from the job's).
   */
  const orderAdvanceJob: JobHandler = {
    retryDelayMs: (attempt) => Math.min(1000 * 2 ** Math.min(attempt - 1, 20), 60 * 60 * 1000),
    async run(row) {
      const { orderId, status, shipmentId } = row.payload as { orderId: number; status: string; shipmentId: number }
      try {
        await orderStore.setOrderStatus(orderId, status)
      } catch (error) {
        logger.error({ err: error, orderId, status }, 'Could not advance the order of a shipped shipment; it will be retried')
        return { state: 'retry', error: shortError(error) }
      }
      return {
        state: 'done',
        followUps: [
          { kind: 'event', name: 'orderAdvanced', messageId: `${row.messageId}:advanced`, orderingKey: `order:${orderId}`, payload: { orderId, status, shipmentId } },
        ],
      }
    },
  }

  /** A move to shipped is refused while the order status it would advance the order to does not exist. */
  async function requireShippedOrderStatus(id: number) {
    const status = deps.shippedOrderStatus
    if (status === null || !orderStore.orderStatusExists || (await orderStore.orderStatusExists(status))) return
    logger.error({ shipmentId: id, shippedOrderStatus: status }, 'A shipment cannot be shipped: the order status shippedOrderStatus names does not exist')
    throw new ShipmentUpdateRejectedError(
      `Couldn't update shipment ${id}: the order status "${status}" (shippedOrderStatus) does not exist. Create it first.`,
    )
  }

  async function update(id: number, input: ShipmentUpdateInput | unknown, context: UpdateContext = {}): Promise<UpdateResult> {
    return applyUpdate(id, input, context, null)
  }

  /**
   * `orderCancellation`: the change cancels the shipment with its order (remembering the status to
   * restore) or restores it; it applies only while the shipment is as the order sync found it.
   */
  async function applyUpdate(
    id: number,
    input: ShipmentUpdateInput | unknown,
    context: UpdateContext,
    orderCancellation: 'cancel' | 'restore' | null,
  ): Promise<UpdateResult> {
    let patch: ShipmentPatch
    try {
      patch = parseShipmentUpdate(input, { fieldsByHandle, timeZone, now: deps.clock() })
    } catch (error) {
      await requireRow(id) // an unknown shipment is a 404 before it is a validation error
      throw error
    }
    if (!Number.isSafeInteger(id)) throw new ShipmentsErrors.ShipmentNotFound(id)
    const userId = context.userId ?? null

    if (patch.status === undefined && !context.externalEvent && Object.keys(patch.fields).length === 0) {
      // Nothing to read first: one UPDATE ... RETURNING is atomic on its own and doubles as the
      // existence check, which spares the hot path a query and an explicit transaction.
      const after = await withServiceErrors(id, () => data.updateShipmentColumns(id, { ...patch.columns, updatedAt: new Date(deps.clock()) }))
      if (!after) throw new ShipmentsErrors.ShipmentNotFound(id)
      return { shipment: present(after), transition: null, stale: false }
    }

    // A status change or an integration's event holds the shipment's mutex (spec 3.3); a field merge
    // alone is one atomic read-and-write without it.
    const underMutex = patch.status !== undefined || context.externalEvent !== undefined
    const target = patch.status
    // The shipment as presented, for the event and the answer alike: formatting its dates once.
    let presentedRow: { row: ShipmentRow; shipment: Shipment } | null = null
    const presented = (row: ShipmentRow) => {
      if (presentedRow?.row !== row) presentedRow = { row, shipment: present(row) }
      return presentedRow.shipment
    }
    // A refusal (or any failure) of the caller's authorization reaches the caller as it was thrown.
    let refusal: unknown
    const authorizeTransition = context.authorizeTransition
    let committed
    try {
      committed = await withServiceErrors(
        id,
        () =>
          data.commitShipmentChange(id, {
            lockTimeoutMs: underMutex ? deps.lockTimeoutMs : undefined,
            authorize:
              target !== undefined && (authorizeTransition || target === 'shipped')
                ? async (current) => {
                    if (current.status === target) return
                    try {
                      // The caller's permission first: a user who may not ship learns nothing of the configuration.
                      await authorizeTransition?.(current.status as ShipmentStatus, target)
                      if (target === 'shipped') await requireShippedOrderStatus(id)
                    } catch (error) {
                      refusal = error
                      throw error
                    }
                  }
                : undefined,
            externalEvent: context.externalEvent,
            plan: (before) => {
              if (orderCancellation === 'cancel') {
                if (!isOpen(before)) return unchanged(before)
                return planChange(before, patch, userId, before.status)
              }
              if (orderCancellation === 'restore') {
                if (before.status !== 'cancelled' || before.statusBeforeOrderCancel === null) return unchanged(before)
                return planChange(before, { ...patch, status: before.statusBeforeOrderCancel as ShipmentStatus }, userId)
              }
              return planChange(before, patch, userId)
            },
            messages: (outcome) => changeMessages(outcome, patch, userId, presented),
            claimFor: dispatcher.claim,
          }),
        (error) => error === refusal,
      )
    } catch (error) {
      if (!(error instanceof LockTimeoutError)) throw error
      throw new ShipmentUpdateRejectedError(
        `Couldn't update shipment ${id} right now because another update is in progress. Please try again.`,
        { cause: error },
      )
    }

    const shipment = presented(committed.row)
    const transition =
      committed.historyId !== null
        ? { from: committed.previousStatus as ShipmentStatus, to: committed.row.status as ShipmentStatus, historyId: committed.historyId }
        : null
    // Listeners are called before this returns; the order advance has been tried once when it does.
    await dispatcher.deliver(committed.messages)
    return { shipment, transition, stale: committed.stale }
  }

  /**
   * A database failure while saving becomes the service-level 422 of spec 7.1, logged in full. Errors
   * the caller must see as they are (not found, refused, lock timeout) pass through.
   */
  async function withServiceErrors<T>(id: number, commit: () => Promise<T>, passThrough: (error: unknown) => boolean = () => false): Promise<T> {
    try {
      return await commit()
    } catch (error) {
      if (error instanceof ShipmentMissingError) throw new ShipmentsErrors.ShipmentNotFound(id)
      if (error instanceof LockTimeoutError || passThrough(error)) throw error
      logger.error({ err: error, shipmentId: id }, 'Saving a shipment failed')
      throw new ShipmentUpdateRejectedError(`Couldn't update shipment ${id}: the change could not be saved.`, {
        cause: error,
      })
    }
  }

  async function create(orderId: number, options: CreateShipmentsOptions = {}): Promise<Shipment[]> {
    const howMany = options.count ?? 1
    if (!Number.isSafeInteger(howMany) || howMany < 1 || howMany > 100) {
      throw new RangeError('count must be an integer from 1 to 100')
    }
    const order = await orderStore.findOrder(orderId)
    if (!order) throw new ShipmentsErrors.OrderNotFound(orderId)
    const userId = options.userId ?? null
    const { rows, messages } = await data.createShipments(orderId, order.reference, howMany, userId, {
      of: (created) =>
        created.map((row) => ({
          kind: 'event' as const,
          name: 'shipmentCreated',
          orderingKey: shipmentKey(row.id),
          payload: { shipment: present(row), userId, sourceIntegration: null, externalCode: null },
        })),
      claimFor: dispatcher.claim,
    })
    await dispatcher.deliver(messages)
    return rows.map(present)
  }

  async function get(id: number): Promise<Shipment | null> {
    const row = Number.isSafeInteger(id) ? await data.findShipment(id) : undefined
    return row ? present(row) : null
  }

  async function list(query: ListShipmentsQuery = {}): Promise<ShipmentPage> {
    // Clamped like the API's bounds, so a host's call cannot reach the database with an offset it refuses.
    const page = Math.min(2_147_483_647, Math.max(1, Math.floor(query.page ?? 1)))
    const perPage = Math.min(100, Math.max(1, Math.floor(query.perPage ?? 50)))
    const { rows, total } = await data.listShipments({
      orderId: query.orderId,
      status: query.status,
      // Text no reference can hold (NUL, which PostgreSQL refuses in a parameter) matches nothing else either.
      referenceContains: query.search?.trim().replaceAll('\u0000', '') || undefined,
      includeDeleted: query.includeDeleted ?? false,
      limit: perPage,
      offset: (page - 1) * perPage,
    })
    return { shipments: rows.map(present), total, page, perPage }
  }

  async function history(id: number): Promise<ShipmentHistoryEntry[]> {
    await requireRow(id)
    return (await data.shipmentHistory(id)).map((row) => toHistoryEntry(row, timeZone))
  }

  async function setDeleted(id: number, deleted: boolean): Promise<Shipment> {
    const changed = Number.isSafeInteger(id)
      ? await data.setShipmentDeleted(id, deleted, new Date(deps.clock()), {
          of: (row) => [{ kind: 'event', name: deleted ? 'shipmentDeleted' : 'shipmentRestored', orderingKey: shipmentKey(row.id), payload: { shipment: present(row) } }],
          claimFor: dispatcher.claim,
        })
      : undefined
    if (!changed) throw new ShipmentsErrors.ShipmentNotFound(id)
    await dispatcher.deliver(changed.messages)
    return present(changed.row)
  }

  /** Neither shipped nor cancelled: what cancelling with the order may cancel. */
  const isOpen = (row: Pick<ShipmentRow, 'status'>) => row.status !== 'shipped' && row.status !== 'cancelled'

  /**
   * The host reports an order's new status. When it is one of `cancelWithOrderStatuses`, the order's
   * open shipments move to cancelled ("Cancelled with the order."); when it is not, shipments cancelled
   * that way move back to the status they had ("Restored with the order."). Deleted and disabled
   * shipments are left alone. Each move goes through the update path (mutex, history, events).
   */
  async function orderStatusChanged(orderId: number, statusHandle: string): Promise<OrderSyncResult> {
    if (!Number.isSafeInteger(orderId)) throw new ShipmentsErrors.OrderNotFound(orderId)
    const cancelling = deps.cancelWithOrderStatuses.includes(statusHandle)
    const changed: Shipment[] = []
    for (let page = 1; ; page++) {
      const { rows } = await data.listShipments({ orderId, includeDeleted: false, limit: 100, offset: (page - 1) * 100 })
      for (const row of rows) {
        if (!row.enabled) continue
        const candidate = cancelling ? isOpen(row) : row.status === 'cancelled' && row.statusBeforeOrderCancel !== null
        if (!candidate) continue
        // The target is re-decided under the lock; 'cancelled' here only names a status change to make.
        const result = await applyUpdate(
          row.id,
          { status: 'cancelled', statusMessage: cancelling ? CANCELLED_WITH_ORDER : RESTORED_WITH_ORDER },
          {},
          cancelling ? 'cancel' : 'restore',
        )
        if (result.transition) changed.push(result.shipment)
      }
      if (rows.length < 100) break
    }
    return { action: cancelling ? 'cancelled' : 'restored', shipments: changed }
  }

  return {
    create,
    get,
    list,
    update,
    history,
    /** Soft-deletes: the shipment stays readable and updatable (spec 4.1), but leaves default lists. */
    softDelete: (id: number) => setDeleted(id, true),
    restore: (id: number) => setDeleted(id, false),
    orderStatusChanged,
    /** The outbox job that advances an order (the plugin registers it with the dispatcher). */
    orderAdvanceJob,
  }
}
