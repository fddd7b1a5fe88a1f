// The update's write: the change planned against the row read in the write transaction and committed
// with its history row and events, under the shipment's mutex when the status changes or an
// integration's event applies (the caller's authorization asked there), then the events delivered.
import {
  AllocationExceededError,
  LockTimeoutError,
  ShipmentMissingError,
  type CoverageRule,
  type FillableColumns,
  type ShipmentRow,
} from '../db/data-layer.js'
import { ShipmentsErrors, ShipmentUpdateRejectedError } from '../errors.js'
import { applyDetection } from './detection.js'
import type { Shipment, ShipmentStatus } from '../model/shipment.js'
import type { ShipmentPatch } from './update-input.js'
import { allocationRefusal, isOpen, type ShipmentServiceContext } from './service-context.js'
import type { UpdateContext, UpdateResult } from './update-context.js'
import type { ShipmentUpdatePlan } from './update-plan.js'
import type { ShipmentUpdateEvents } from './update-events.js'
import type { OrderAdvance } from './order-advance.js'

/** What the commit takes of the update path's other parts, handed over by createShipmentUpdates. */
export interface UpdateCommitParts {
  plan: ShipmentUpdatePlan
  events: ShipmentUpdateEvents
  orderAdvance: Pick<OrderAdvance, 'requireShippedOrderStatus'>
}

export function createUpdateCommit(shared: ShipmentServiceContext, parts: UpdateCommitParts) {
  const { deps, present, shippableLines, checkpointsOf } = shared
  const { data, dispatcher, logger } = deps
  const { planChange, unchanged } = parts.plan
  const { changeMessages, estimateMessage } = parts.events
  const { requireShippedOrderStatus } = parts.orderAdvance

  /** Commits the checked patch (see applyUpdate in updates.ts for `orderCancellation`) and delivers its events. */
  async function commitChange(
    id: number,
    patch: ShipmentPatch,
    context: UpdateContext,
    orderCancellation: 'cancel' | 'restore' | null,
    fillEmpty: FillableColumns,
  ): Promise<UpdateResult> {
    const userId = context.userId ?? null
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
            advanceOrderInTransaction: deps.referenceStore === true,
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

  return { commitChange, withServiceErrors }
}
