// The shipment service: the one update path every change goes through (API, gateway, ShipStation).
import type { FastifyBaseLogger } from 'fastify'
import {
  AllocationExceededError,
  holdsAllocation,
  LockTimeoutError,
  ShipmentMissingError,
  type CoverageRule,
  type DataLayer,
  type NewOutboxMessage,
  type ShipmentChangePlan,
  type ShipmentColumns,
  type ShipmentRow,
  type StoredShipmentItem,
} from '../db/data-layer.js'
import { ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import { shortError, type JobHandler, type OutboxDispatcher } from '../outbox/dispatcher.js'
import type { OrderLine, OrderStore, OrderSummary } from '../orders/order-store.js'
import type { DetectedCarrier } from './carriers.js'
import { inChunks } from '../in-chunks.js'
import { BUILT_IN_SPLIT_RULES, exceedsOrdered, linesLeft, MAX_ITEMS_PER_SHIPMENT, parseItemsInput, storedItems, type ShipmentItemInput, type SplitRule } from './items.js'
import type { ShipmentFieldDefinition } from './field-layout.js'
import { milestoneOf, newCheckpointRow, toCheckpoint, type Checkpoint, type CheckpointInput } from './checkpoints.js'
import { parseIsoDateTime } from '../time.js'
import { allocatedLine, createAttentionList, type OrderAllocation } from './attention.js'
import { applyDetection, detectedCarrierFill, leavesToDetection } from './detection.js'
import { toHistoryEntry, toShipment, type Shipment, type ShipmentHistoryEntry, type ShipmentStatus } from './shipment.js'
import { parseShipmentUpdate, type ShipmentPatch, type ShipmentUpdateInput } from './update-input.js'

export interface UpdateContext {
  /** The user making the change, recorded on the history row. */
  userId?: string | null | undefined
  /**
   * Called under the shipment's mutex (its in-process queue; no database lock is held) when the status
   * really changes, with the status read then, and again if another process moves the shipment before
   * the write; throw to refuse the transition (the API checks the transition permission here).
   */
  authorizeTransition?: ((from: ShipmentStatus, to: ShipmentStatus) => void | Promise<void>) | undefined
  /**
   * The update is an integration's event: it is applied under the shipment's lock, and only when it
   * is not older than the last event applied from that integration, so late deliveries never move a
   * shipment back.
   */
  externalEvent?: ExternalEvent | undefined
  /**
   * The update is a webhook delivery with this id: it is recorded in the integration's dedupe ledger in
   * the update's own transaction, so a crash never keeps the mark without its effect, and a delivery
   * recorded before changes nothing (`duplicate` in the result).
   */
  delivery?: { integrationId: number; deliveryId: string } | undefined
  /**
   * A move to shipped advances the order only when the shipped shipments hold every shippable line in
   * full, as under `requireFullCoverage`: a ShipStation notification for part of an order ships its
   * shipment without completing the order.
   */
  requireFullCoverage?: boolean | undefined
}

/**
 * How far into the future an integration's event may be dated (clock skew between sender and host).
 * Later than that is refused: an event from year 9999 would make every genuine event after it stale.
 */
export const EXTERNAL_EVENT_MAX_SKEW_MS = 5 * 60 * 1000

export interface ExternalEvent {
  integrationId: number
  occurredAt: Date
  /** The shipment's id and page at the integration, kept as its external reference. */
  externalId?: string | null | undefined
  /** The shipment's page at the integration; it also fills the shipment's `trackingUrl` when that is empty. */
  externalUrl?: string | null | undefined
  /**
   * The carrier's time of the event's first scan that means shipped: the shipment's `dateShipped` when
   * this event ships it (the time the event arrived otherwise).
   */
  shippedAt?: Date | undefined
  /** The delivery date the carrier now expects, as sent; undefined leaves the shipment's estimate as it is. */
  estimatedDelivery?: string | undefined
}

export interface UpdateResult {
  shipment: Shipment
  /** The transition applied, or null when the status did not change. */
  transition: { from: ShipmentStatus; to: ShipmentStatus; historyId: number } | null
  /** True when an external event was older than the last one applied, and so changed nothing. */
  stale: boolean
  /** True when the delivery (`UpdateContext.delivery`) was recorded before, and so changed nothing. */
  duplicate: boolean
}

export interface OrderSyncResult {
  /** What the order's new status asked for. */
  action: 'cancelled' | 'restored'
  /** The shipments moved, as they are now. */
  shipments: Shipment[]
  /**
   * Shipments a restore left cancelled because the allocation refused it (another shipment took their
   * quantities meanwhile), with the refusal's errors by field (`items.<lineItemId>`). Empty when cancelling.
   */
  notRestored: Array<{ shipmentId: number; errors: Record<string, string[]> }>
}

export interface ListShipmentsQuery {
  orderId?: number | undefined
  status?: ShipmentStatus | undefined
  /**
   * Shipments whose reference starts with this text, ASCII letters in either case (an order's reference
   * finds its shipments; an index range, as fast at a million shipments as at ten thousand), or whose
   * tracking number is this text, ignoring case, spaces and dashes.
   */
  search?: string | undefined
  /** Shipments with this tracking number, ignoring case, spaces and dashes (`1z 999-aa1` finds `1Z999AA1`); indexed. */
  trackingNumber?: string | undefined
  /** Shipments whose external reference at this integration (by id) has this external id. */
  externalReference?: { integrationId: number; externalId: string } | undefined
  includeDeleted?: boolean | undefined
  page?: number | undefined
  perPage?: number | undefined
  /**
   * Key paging: the shipments after this id (the last one of the page before), as cheap deep in the
   * list as at its start. `page` is then only reported back.
   */
  afterId?: number | undefined
}

export interface ShipmentPage {
  shipments: Shipment[]
  total: number
  page: number
  perPage: number
}

export interface CreateShipmentsOptions {
  /** How many order-level shipments (no items) to create. Default 1. Not with `items` or `rule`. */
  count?: number | undefined
  /** One shipment holding these order lines. */
  items?: ShipmentItemInput[] | undefined
  /**
   * Shipments for what is left of the order, divided by a split rule: `remaining` (one shipment for
   * everything left), `perLine` (one per line), or a host rule of the `splitRules` option.
   */
  rule?: string | undefined
  userId?: string | null | undefined
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

/** The messages that cancel and restore shipments with their order write on the history. */
export const CANCELLED_WITH_ORDER = 'Cancelled with the order.'
export const RESTORED_WITH_ORDER = 'Restored with the order.'

/** The outbox job that applies the order advance; retried until the order store takes it. */
export const ORDER_ADVANCE_JOB = 'orderAdvance'
const shipmentKey = (id: number) => `shipment:${id}`

export type ShipmentService = ReturnType<typeof createShipmentService>

/**
 * The update's `items` (replacing the shipment's, `[]` for order-level) and `enabled`, beyond spec 2.2:
 * both are checked against the order's allocation. null or absent leaves them unchanged.
 */
function parseAllocationInput(input: unknown): { items?: ShipmentItemInput[]; enabled?: boolean } {
  if (typeof input !== 'object' || input === null) return {}
  const { items, enabled } = input as { items?: unknown; enabled?: unknown }
  if (enabled != null && typeof enabled !== 'boolean') throw new ShipmentValidationError({ enabled: ['Enabled must be true or false.'] })
  return { items: items == null ? undefined : parseItemsInput(items), enabled: enabled ?? undefined }
}


export function createShipmentService(deps: ShipmentServiceDependencies) {
  const { data, dispatcher, orderStore, logger, timeZone } = deps
  const fieldsByHandle = new Map(deps.shipmentFields.map((field) => [field.handle, field]))
  const present = (shipment: ShipmentRow) => toShipment(shipment, timeZone)
  const attentionList = createAttentionList({ data, orderStore, clock: deps.clock })
  const { keepsAttention, attentionRefresh, refreshAttention } = attentionList

  async function requireRow(id: number): Promise<ShipmentRow> {
    const row = Number.isSafeInteger(id) ? await data.findShipment(id) : undefined
    if (!row) throw new ShipmentsErrors.ShipmentNotFound(id)
    return row
  }

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
    // What the order's active shipments hold changed: its attention row is decided again.
    const allocationChanged =
      patch.columns.items !== undefined ||
      patch.columns.enabled !== undefined ||
      (outcome.historyId !== null && (outcome.previousStatus === 'cancelled' || outcome.row.status === 'cancelled'))
    if (allocationChanged && keepsAttention) messages.push(attentionRefresh(outcome.row.orderId))
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

  /** An over-allocation as the 422 of the line it names. */
  const allocationRefusal = (error: AllocationExceededError) =>
    new ShipmentValidationError({ [`items.${error.item.lineItemId}`]: [error.message] }, { cause: error })

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
    const { items, enabled } = parseAllocationInput(input)
    if (enabled !== undefined) patch.columns.enabled = enabled
    if (items !== undefined) {
      const row = await requireRow(id)
      patch.columns.items = items.length === 0 ? [] : await itemsOfOrder(row.orderId, items, row)
    }
    const userId = context.userId ?? null
    const fillEmpty = detectedCarrierFill(patch, deps.detectCarrier)
    const occurredAt = context.externalEvent?.occurredAt.getTime()
    if (occurredAt !== undefined && !(occurredAt <= deps.clock() + EXTERNAL_EVENT_MAX_SKEW_MS)) {
      await requireRow(id)
      throw new ShipmentValidationError({ occurredAt: ['Occurred At must be a date at most 5 minutes in the future.'] })
    }

    // Items and the enabled flag are checked against the order's allocation inside the transaction.
    const allocates = patch.columns.items !== undefined || patch.columns.enabled !== undefined
    if (patch.status === undefined && !context.externalEvent && !context.delivery && !allocates && Object.keys(patch.fields).length === 0) {
      // Nothing to read first: one UPDATE ... RETURNING is atomic on its own and doubles as the
      // existence check, which spares the hot path a query and an explicit transaction. A tracking number
      // that replaces another, with detection to redo, needs the stored values: the path below reads them.
      const revisitsDetection = leavesToDetection(patch)
      const after = await withServiceErrors(id, () =>
        data.updateShipmentColumns(id, { ...patch.columns, updatedAt: new Date(deps.clock()) }, fillEmpty, { unlessTrackingNumberChanges: revisitsDetection }),
      )
      if (after) return { shipment: present(after), transition: null, stale: false, duplicate: false }
      if (!revisitsDetection) throw new ShipmentsErrors.ShipmentNotFound(id)
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
    // The estimate the plan changed (set inside the transaction, read by the messages of the same one).
    let estimateChange: { from: string | null; to: string | null } | null = null
    // A refusal (or any failure) of the caller's authorization reaches the caller as it was thrown.
    let refusal: unknown
    // Under the full-coverage rule, the shippable lines a move to shipped must find held in full.
    let coverage: CoverageRule | null = null
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
                      if (target === 'shipped') {
                        await requireShippedOrderStatus(id)
                        const rule = context.requireFullCoverage ? true : deps.requireFullCoverage
                        if (rule) coverage = { lines: await shippableLines(current.orderId), itemizedOnly: rule === 'itemized' }
                      }
                    } catch (error) {
                      refusal = error
                      throw error
                    }
                  }
                : undefined,
            externalEvent: context.externalEvent,
            delivery: context.delivery,
            plan: (before) => {
              if (orderCancellation === 'cancel') {
                if (!isOpen(before)) return unchanged(before)
                return planChange(before, patch, userId, before.status)
              }
              if (orderCancellation === 'restore') {
                if (before.status !== 'cancelled' || before.statusBeforeOrderCancel === null) return unchanged(before)
                return planChange(before, { ...patch, status: before.statusBeforeOrderCancel as ShipmentStatus }, userId)
              }
              const plan = planChange(before, patch, userId, null, context.externalEvent)
              estimateChange = plan.columns.estimatedDelivery !== undefined ? { from: before.estimatedDelivery, to: plan.columns.estimatedDelivery } : null
              applyDetection(before, plan.columns, patch, fillEmpty, deps.detectCarrier)
              return plan.claimOrderAdvance === null ? plan : { ...plan, requireCoverage: coverage }
            },
            messages: (outcome) => {
              const messages = changeMessages(outcome, patch, userId, presented)
              if (estimateChange) messages.push(estimateMessage(outcome.row, estimateChange, presented))
              return messages
            },
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
    return { shipment, transition, stale: committed.stale, duplicate: committed.duplicate }
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
      if (error instanceof AllocationExceededError) throw allocationRefusal(error)
      if (error instanceof LockTimeoutError || passThrough(error)) throw error
      logger.error({ err: error, shipmentId: id }, 'Saving a shipment failed')
      throw new ShipmentUpdateRejectedError(`Couldn't update shipment ${id}: the change could not be saved.`, {
        cause: error,
      })
    }
  }

  /** A split rule by name: a host's own, or a built-in one. */
  function splitRule(name: string): SplitRule {
    const rule = Object.hasOwn(deps.splitRules, name) ? deps.splitRules[name] : Object.hasOwn(BUILT_IN_SPLIT_RULES, name) ? BUILT_IN_SPLIT_RULES[name as keyof typeof BUILT_IN_SPLIT_RULES] : undefined
    if (!rule) throw new ShipmentValidationError({ rule: [`No split rule "${name}".`] })
    return rule
  }

  async function create(orderId: number, options: CreateShipmentsOptions = {}): Promise<Shipment[]> {
    const modes = [options.count, options.items, options.rule].filter((value) => value !== undefined).length
    if (modes > 1) throw new ShipmentValidationError({ items: ['Give one of count, items or rule.'] })
    const howMany = options.count ?? 1
    if (!Number.isSafeInteger(howMany) || howMany < 1 || howMany > 100) {
      throw new RangeError('count must be an integer from 1 to 100')
    }
    const order = await orderStore.findOrder(orderId)
    if (!order) throw new ShipmentsErrors.OrderNotFound(orderId)
    let plan: (allocated: ReadonlyMap<number, number>) => StoredShipmentItem[][]
    if (options.items !== undefined) {
      const stored = await itemsOfOrder(orderId, parseItemsInput(options.items))
      plan = () => [stored]
    } else if (options.rule !== undefined) {
      plan = rulePlan(order, splitRule(options.rule), await requireOrderLines(orderId))
    } else {
      plan = () => Array.from({ length: howMany }, () => [])
    }
    return createPlanned(order, plan, options.userId ?? null)
  }

  /**
   * What a split rule makes of what is left, decided under the order's lock; a rule's bad output is a
   * 422. A group of more than MAX_ITEMS_PER_SHIPMENT lines (`remaining` on a big order) becomes several
   * shipments of at most that many lines each, in the rule's order.
   */
  function rulePlan(order: OrderSummary, rule: SplitRule, lines: OrderLine[]) {
    return (allocated: ReadonlyMap<number, number>): StoredShipmentItem[][] =>
      rule(linesLeft(lines, allocated), order)
        .flatMap((group) => (Array.isArray(group) ? inChunks(group, MAX_ITEMS_PER_SHIPMENT) : [group]))
        .map((group) => storedItems(parseItemsInput(group), lines, allocated))
        .filter((group) => group.length > 0)
  }

  async function createPlanned(order: OrderSummary, plan: (allocated: ReadonlyMap<number, number>) => StoredShipmentItem[][], userId: string | null) {
    let created
    try {
      created = await data.createShipments(order.id, order.reference, plan, userId, {
        of: (rows) => [
          ...rows.map((row) => ({
            kind: 'event' as const,
            name: 'shipmentCreated',
            orderingKey: shipmentKey(row.id),
            payload: { shipment: present(row), userId, sourceIntegration: null, externalCode: null },
          })),
          ...(rows.length > 0 && keepsAttention ? [attentionRefresh(order.id)] : []),
        ],
        claimFor: dispatcher.claim,
      })
    } catch (error) {
      if (error instanceof AllocationExceededError) throw allocationRefusal(error)
      throw error
    }
    await dispatcher.deliver(created.messages)
    return created.rows.map(present)
  }

  /**
   * The host reports that an order completed: its shipments are created by the split rule (default
   * `remaining`: one shipment for everything left) from what no active shipment holds yet, so calling
   * it again creates nothing more. An order store without lines gets one order-level shipment, when the
   * order has none.
   */
  async function orderCompleted(orderId: number, options: { rule?: string | undefined; userId?: string | null | undefined } = {}): Promise<Shipment[]> {
    const order = Number.isSafeInteger(orderId) ? await orderStore.findOrder(orderId) : null
    if (!order) throw new ShipmentsErrors.OrderNotFound(orderId)
    const lines = orderStore.orderLines ? await orderStore.orderLines(orderId) : null
    const rule = splitRule(options.rule ?? 'remaining')
    if (lines) {
      const created = await createPlanned(order, rulePlan(order, rule, lines), options.userId ?? null)
      // Completed with nothing created (all held already, or a rule that leaves lines out): judged now.
      if (created.length === 0) await refreshAttention(orderId)
      return created
    }
    const { total } = await data.listShipments({ orderId, includeDeleted: true, limit: 1, offset: 0 })
    // Two concurrent calls may both see none here: the order-level fallback is best effort; with lines it is exact.
    return total > 0 ? [] : createPlanned(order, () => [[]], options.userId ?? null)
  }

  async function get(id: number): Promise<Shipment | null> {
    const row = Number.isSafeInteger(id) ? await data.findShipment(id) : undefined
    return row ? present(row) : null
  }

  async function list(query: ListShipmentsQuery = {}): Promise<ShipmentPage> {
    // Clamped like the API's bounds, so a host's call cannot reach the database with an offset it refuses.
    const page = Math.min(2_147_483_647, Math.max(1, Math.floor(query.page ?? 1)))
    const perPage = Math.min(100, Math.max(1, Math.floor(query.perPage ?? 50)))
    const afterId = query.afterId !== undefined && Number.isSafeInteger(query.afterId) && query.afterId >= 0 ? Math.min(query.afterId, 2_147_483_647) : undefined
    // Exact matches: a NUL (which PostgreSQL refuses in a parameter) is in no stored value.
    if (query.trackingNumber?.includes('\u0000') || query.externalReference?.externalId.includes('\u0000')) return { shipments: [], total: 0, page, perPage }
    const { rows, total } = await data.listShipments({
      orderId: query.orderId,
      status: query.status,
      // Text no reference can hold (NUL, which PostgreSQL refuses in a parameter) matches nothing else either.
      referenceStartsWith: query.search?.trim().replaceAll('\u0000', '') || undefined,
      trackingNumber: query.trackingNumber,
      externalReference: query.externalReference,
      includeDeleted: query.includeDeleted ?? false,
      limit: perPage,
      ...(afterId !== undefined ? { afterId, offset: 0 } : { offset: (page - 1) * perPage }),
    })
    return { shipments: rows.map(present), total, page, perPage }
  }

  /** The shipment's carrier checkpoints in carrier-time order, oldest first. */
  async function checkpoints(id: number): Promise<Checkpoint[]> {
    await requireRow(id)
    return (await data.checkpoints.shipmentCheckpoints(id)).map((row) => toCheckpoint(row, timeZone))
  }

  /**
   * Keeps the scans a tracking service reported for a shipment (or one of its parcels, by id) that are
   * not kept yet; answers how many were new. Idempotent, so a provider calls it before the event's
   * update: a crash between the two loses nothing, and the retry adds nothing twice.
   */
  async function recordCheckpoints(shipmentId: number, scans: { trackingNumber: string; source: string; parcelId?: number | null | undefined; checkpoints: readonly CheckpointInput[] }): Promise<number> {
    if (scans.checkpoints.length === 0) return 0
    const shipment = present(await requireRow(shipmentId))
    const rows = scans.checkpoints.map((checkpoint) => newCheckpointRow(shipmentId, scans.parcelId ?? null, scans.trackingNumber, scans.source, checkpoint))
    const written = await data.checkpoints.addCheckpoints(rows, new Date(deps.clock()), {
      // The newest new scan that is a milestone is an event (notifications follow it), written with the
      // scans: a full history arriving at once (a tracker first seen when delivered) sends one notice.
      of: (added) => {
        const newest = added
          .filter((row) => milestoneOf(row) !== null)
          .sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime() || a.id - b.id)
          .at(-1)
        if (!newest) return []
        return [{ kind: 'event', name: 'carrierMilestone', orderingKey: shipmentKey(shipmentId), payload: { shipment, milestone: milestoneOf(newest)!, checkpoint: toCheckpoint(newest, timeZone) } }]
      },
      claimFor: dispatcher.claim,
    })
    await dispatcher.deliver(written.messages)
    return written.added.length
  }

  async function history(id: number): Promise<ShipmentHistoryEntry[]> {
    await requireRow(id)
    return (await data.shipmentHistory(id)).map((row) => toHistoryEntry(row, timeZone))
  }

  async function setDeleted(id: number, deleted: boolean): Promise<Shipment> {
    const changed = Number.isSafeInteger(id)
      ? await data
          .setShipmentDeleted(id, deleted, new Date(deps.clock()), {
            of: (row) => [
              { kind: 'event', name: deleted ? 'shipmentDeleted' : 'shipmentRestored', orderingKey: shipmentKey(row.id), payload: { shipment: present(row) } },
              ...(keepsAttention ? [attentionRefresh(row.orderId)] : []),
            ],
            claimFor: dispatcher.claim,
          })
          .catch((error: unknown) => {
            throw error instanceof AllocationExceededError ? allocationRefusal(error) : error
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
   * A restore the allocation refuses leaves that shipment cancelled (listed in `notRestored`, logged)
   * and the order's other shipments are still restored.
   */
  async function orderStatusChanged(orderId: number, statusHandle: string): Promise<OrderSyncResult> {
    if (!Number.isSafeInteger(orderId)) throw new ShipmentsErrors.OrderNotFound(orderId)
    const cancelling = deps.cancelWithOrderStatuses.includes(statusHandle)
    const changed: Shipment[] = []
    const notRestored: OrderSyncResult['notRestored'] = []
    for (let page = 1; ; page++) {
      const { rows } = await data.listShipments({ orderId, includeDeleted: false, limit: 100, offset: (page - 1) * 100 })
      for (const row of rows) {
        if (!row.enabled) continue
        const candidate = cancelling ? isOpen(row) : row.status === 'cancelled' && row.statusBeforeOrderCancel !== null
        if (!candidate) continue
        let result: UpdateResult
        try {
          // The target is re-decided under the lock; 'cancelled' here only names a status change to make.
          result = await applyUpdate(
            row.id,
            { status: 'cancelled', statusMessage: cancelling ? CANCELLED_WITH_ORDER : RESTORED_WITH_ORDER },
            {},
            cancelling ? 'cancel' : 'restore',
          )
        } catch (error) {
          // Its quantities went to another shipment meanwhile: one such shipment must not keep the rest cancelled.
          if (cancelling || !(error instanceof ShipmentValidationError)) throw error
          const reason = Object.values(error.errors).flat().join(' ')
          logger.warn({ shipmentId: row.id, orderId, errors: error.errors }, `Shipment ${row.id} stays cancelled: restoring it with its order was refused. ${reason}`)
          notRestored.push({ shipmentId: row.id, errors: error.errors })
          continue
        }
        if (result.transition) changed.push(result.shipment)
      }
      if (rows.length < 100) break
    }
    return { action: cancelling ? 'cancelled' : 'restored', shipments: changed, notRestored }
  }

  /** The order's lines with what its active shipments hold and what is left. */
  async function allocation(orderId: number): Promise<OrderAllocation> {
    const order = Number.isSafeInteger(orderId) ? await orderStore.findOrder(orderId) : null
    if (!order) throw new ShipmentsErrors.OrderNotFound(orderId)
    const lines = orderStore.orderLines ? await orderStore.orderLines(orderId) : null
    if (!lines) return { order, lines: null }
    const allocated = (await data.allocations([orderId])).get(orderId) ?? new Map<number, number>()
    return { order, lines: lines.map((line) => allocatedLine(line, allocated)) }
  }

  return {
    create,
    allocation,
    /**
     * Completed orders whose active shipments do not hold every shippable line in full, oldest first,
     * with the lines and units missing (see attention.ts). Empty for an order store without lines.
     */
    attention: attentionList.attention,
    get,
    list,
    update,
    history,
    checkpoints,
    recordCheckpoints,
    /** Soft-deletes: the shipment stays readable and updatable (spec 4.1), but leaves default lists. */
    softDelete: (id: number) => setDeleted(id, true),
    restore: (id: number) => setDeleted(id, false),
    orderStatusChanged,
    orderCompleted,
    /**
     * Tells the package that an order changed in the order store in a way the attention list depends on
     * (it completed, or its lines changed) without `orderCompleted()`: its attention row is decided again.
     */
    orderChanged: refreshAttention,
    /** The outbox job that advances an order (the plugin registers it with the dispatcher). */
    orderAdvanceJob,
    /** The outbox job that decides an order's attention row again (the plugin registers it). */
    attentionRefreshJob: attentionList.attentionRefreshJob,
    /** Builds the attention rows of a database that has none yet (the plugin starts it once ready). */
    buildAttentionRows: attentionList.buildAttentionRows,
  }
}
