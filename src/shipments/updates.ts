// The shipment update path every change goes through (API, gateway, ShipStation, the order sync): the
// patch is planned against the row as read in the write transaction, under the shipment's mutex when the
// status changes or an integration's event applies, and its events and order advance are written in that
// same transaction. Rule: no change to a shipment's status, fields, items or enabled flag bypasses `applyUpdate`.
import {
  AllocationExceededError,
  LockTimeoutError,
  ShipmentMissingError,
  type CoverageRule,
  type NewOutboxMessage,
  type ShipmentChangePlan,
  type ShipmentColumns,
  type ShipmentRow,
} from '../db/data-layer.js'
import { ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import { shortError, type JobHandler } from '../outbox/dispatcher.js'
import { parseItemsInput, type ShipmentItemInput } from './items.js'
import { parseIsoDateTime } from '../time.js'
import { applyDetection, detectedCarrierFill, leavesToDetection } from './detection.js'
import type { Shipment, ShipmentStatus } from './shipment.js'
import { parseShipmentUpdate, type ShipmentPatch, type ShipmentUpdateInput } from './update-input.js'
import { allocationRefusal, isOpen, shipmentKey, type ScansToKeep, type ShipmentServiceContext } from './service-context.js'

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
  /**
   * The carrier's scans the integration's event reported: kept (those not kept yet) in the update's
   * transaction, also when the event is stale, with the `carrierMilestone` of the newest new milestone.
   * A refused update keeps none of them.
   */
  checkpoints?: ScansToKeep | undefined
}

/**
 * How far into the future an integration's event may be dated (clock skew between sender and host).
 * Later than that is refused: an event from year 9999 would make every genuine event after it stale.
 */
export const EXTERNAL_EVENT_MAX_SKEW_MS = 5 * 60 * 1000

/** Refuses an integration's event dated later than the clock skew allows (a 400 at the gateway). */
export function refuseFutureEvent(occurredAt: Date, now: number): void {
  if (!(occurredAt.getTime() <= now + EXTERNAL_EVENT_MAX_SKEW_MS)) {
    throw new ShipmentValidationError({ occurredAt: ['Occurred At must be a date at most 5 minutes in the future.'] })
  }
}

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

/** The outbox job that applies the order advance; retried until the order store takes it. */
export const ORDER_ADVANCE_JOB = 'orderAdvance'

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

export function createShipmentUpdates(shared: ShipmentServiceContext) {
  const { deps, present, requireRow, itemsOfOrder, shippableLines, checkpointsOf } = shared
  const { data, dispatcher, orderStore, logger, timeZone } = deps
  const fieldsByHandle = new Map(deps.shipmentFields.map((field) => [field.handle, field]))
  const { keepsAttention, attentionRefresh } = shared.attentionList

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
    if (context.externalEvent) {
      try {
        refuseFutureEvent(context.externalEvent.occurredAt, deps.clock())
      } catch (error) {
        await requireRow(id)
        throw error
      }
    }

    // Items and the enabled flag are checked against the order's allocation inside the transaction.
    const allocates = patch.columns.items !== undefined || patch.columns.enabled !== undefined
    if (patch.status === undefined && !context.externalEvent && !context.delivery && !context.checkpoints && !allocates && Object.keys(patch.fields).length === 0) {
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
    const underMutex = patch.status !== undefined || context.externalEvent !== undefined || context.checkpoints !== undefined
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
            checkpoints: context.checkpoints?.checkpoints.length ? checkpointsOf(id, context.checkpoints) : undefined,
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

  return { update, applyUpdate, orderAdvanceJob }
}

export type ShipmentUpdates = ReturnType<typeof createShipmentUpdates>
