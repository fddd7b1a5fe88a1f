// Creation, allocation and the order sync: shipments created for an order (a count, given items, or a
// split rule over what is left), the order's allocation, and the host's reports that an order completed
// or changed status. Rule: what a shipment holds is checked against the order's allocation in the
// creating transaction, and a status change the order sync makes goes through the update path (updates.ts).
import { inSpan } from '../telemetry.js'
import { AllocationExceededError, type ShipmentRow, type StoredShipmentItem } from '../db/data-layer.js'
import { ShipmentsErrors, ShipmentValidationError } from '../errors.js'
import type { OrderLine, OrderSummary } from '../order-store.js'
import { inChunks } from '../in-chunks.js'
import { BUILT_IN_SPLIT_RULES, linesLeft, MAX_ITEMS_PER_SHIPMENT, parseItemsInput, storedItems, type ShipmentItemInput, type SplitRule } from '../model/items.js'
import { allocatedLine, type OrderAllocation } from './attention.js'
import type { Shipment } from '../model/shipment.js'
import { allocationRefusal, isOpen, shipmentKey, type ShipmentServiceContext } from './service-context.js'
import type { ShipmentUpdates, UpdateResult } from './updates.js'

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

/** The messages that cancel and restore shipments with their order write on the history. */
export const CANCELLED_WITH_ORDER = 'Cancelled with the order.'
export const RESTORED_WITH_ORDER = 'Restored with the order.'

export function createShipmentAllocation(shared: ShipmentServiceContext, updates: Pick<ShipmentUpdates, 'applyUpdate'>) {
  const { deps, present, requireOrderLines, itemsOfOrder } = shared
  const { data, dispatcher, orderStore, logger } = deps
  const { keepsAttention, attentionRefresh, refreshAttention, attentionDecider } = shared.attentionList
  // The package's own order store: the attention row is decided in the creation's transaction, not by a job.
  const attentionInTransaction = keepsAttention && deps.referenceStore === true
  const { applyUpdate } = updates

  /** A split rule by name: a host's own, or a built-in one. */
  function splitRule(name: string): SplitRule {
    const rule = Object.hasOwn(deps.splitRules, name) ? deps.splitRules[name] : Object.hasOwn(BUILT_IN_SPLIT_RULES, name) ? BUILT_IN_SPLIT_RULES[name as keyof typeof BUILT_IN_SPLIT_RULES] : undefined
    if (!rule) throw new ShipmentValidationError({ rule: [`No split rule "${name}".`] })
    return rule
  }

  async function createShipments(orderId: number, options: CreateShipmentsOptions = {}): Promise<Shipment[]> {
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
    const attention = attentionInTransaction ? await attentionDecider(order.id) : undefined
    const messages = {
      of: (rows: ShipmentRow[]) => [
        ...rows.map((row) => ({ kind: 'event' as const, name: 'shipmentCreated', orderingKey: shipmentKey(row.id), payload: { shipment: present(row), userId, sourceIntegration: null, externalCode: null } })),
        ...(rows.length > 0 && keepsAttention && !attentionInTransaction ? [attentionRefresh(order.id)] : []),
      ],
      claimFor: dispatcher.claim,
    }
    try {
      created = await data.createShipments(order.id, order.reference, plan, userId, messages, attention)
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

  return { create: inCreationSpan(createShipments), allocation, orderStatusChanged, orderCompleted }
}

/** A creation (and its allocation of the order's lines) in its span, `shipments.shipment.create`. */
function inCreationSpan(createShipments: (orderId: number, options?: CreateShipmentsOptions) => Promise<Shipment[]>) {
  return function create(orderId: number, options: CreateShipmentsOptions = {}): Promise<Shipment[]> {
    const mode = options.items !== undefined ? 'items' : options.rule !== undefined ? 'rule' : 'count'
    return inSpan('shipments.shipment.create', { 'shipments.order.id': orderId, 'shipments.allocation.mode': mode }, async (span) => {
      const created = await createShipments(orderId, options)
      span.setAttribute('shipments.shipment.count', created.length)
      return created
    })
  }
}
