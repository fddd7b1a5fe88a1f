// The data-layer contract of shipments: their rows, history, items and allocation, the change a
// status update commits in one transaction, and the store every engine implements for them.
import type { StoredParcel } from './parcels.js'
import type { CheckpointRow, NewCheckpoint } from './checkpoints.js'
import type { NewOutboxMessage, OutboxClaim, OutboxRow } from './outbox.js'

/**
 * An order line a shipment holds, as stored: with the line's SKU and name for display, and the quantity
 * the order had of it when it was allocated (so enabling, restoring or un-cancelling the shipment can
 * check the allocation without asking the order store).
 */
export interface StoredShipmentItem {
  lineItemId: number
  quantity: number
  sku: string | null
  name: string
  ordered: number
}

/** A shipment row as every engine returns it. */
export interface ShipmentRow {
  id: number
  reference: string
  orderId: number
  status: string
  dateShipped: Date | null
  dateScheduledShip: Date | null
  trackingNumber: string | null
  trackingUrl: string | null
  carrier: string | null
  service: string | null
  fulfillmentNotes: string | null
  shippingNotes: string | null
  enabled: boolean
  fields: Record<string, unknown>
  dateDeleted: Date | null
  /** Set while the shipment is cancelled with its order: the status to restore with the order. */
  statusBeforeOrderCancel: string | null
  items: StoredShipmentItem[]
  /** A copy of the shipment's parcels, kept by the parcel changes (never written by a shipment change). */
  parcels: StoredParcel[]
  /** The delivery date the carrier expects, as the tracking service sent it; null when none was given. */
  estimatedDelivery: string | null
  /** The integration (handle) the estimate came from. */
  estimatedDeliverySource: string | null
  createdAt: Date
  updatedAt: Date
}

/** Columns an update may fill where they are empty, without overwriting a stored value. */
export type FillableColumns = Partial<Pick<ShipmentRow, 'carrier' | 'trackingUrl'>>

/** The columns an update may write. */
export type ShipmentColumns = Partial<Omit<ShipmentRow, 'id' | 'reference' | 'orderId' | 'createdAt'>>

export interface HistoryRow {
  id: number
  shipmentId: number
  fromStatus: string | null
  toStatus: string
  message: string | null
  userId: string | null
  sourceIntegration: string | null
  sourceExternalCode: string | null
  createdAt: Date
}

export type NewHistoryRow = Omit<HistoryRow, 'id' | 'shipmentId'>

/** An integration's event applied to a shipment: its time orders events, its ids name the remote copy. */
export interface ExternalEventMark {
  integrationId: number
  occurredAt: Date
  externalId?: string | null
  externalUrl?: string | null
}

/** What a shipment change writes, decided from the row as it is under the lock. */
export interface ShipmentChangePlan {
  columns: ShipmentColumns
  /** The history row of a status change, or null when the status stays. */
  history: NewHistoryRow | null
  /**
   * Claim the order's one-time advance to this status when, after the write, no enabled, live
   * shipment of the order is left unshipped (a unique key: one claim per order, ever). null: none.
   */
  claimOrderAdvance: string | null
  /** With `claimOrderAdvance`: the full-coverage rule the order's advance waits for; null: none. */
  requireCoverage?: CoverageRule | null
}

/** The full-coverage rule of an order's advance. */
export interface CoverageRule {
  /** The shippable lines (id to quantity ordered) the order's shipped shipments must hold in full. */
  lines: ReadonlyMap<number, number>
  /**
   * The rule applies only when one of the order's active shipments holds lines: an order shipped as
   * order-level shipments only advances as a whole (spec 3.5), as it always did.
   */
  itemizedOnly: boolean
}

export interface ShipmentChangeRequest {
  /**
   * Take the shipment's transition mutex (spec 3.3) for the whole change, waiting at most this long;
   * undefined: no mutex (the change is still one atomic transaction).
   */
  lockTimeoutMs?: number
  /**
   * Awaited behind the in-process queue with the row as it is then, before the write transaction (no
   * database lock is held meanwhile), and again when another process moved the status before the
   * transaction re-read it; throw to refuse.
   */
  authorize?: (current: ShipmentRow) => Promise<void> | void
  /** The change comes from an integration: applied only when not older than the last one applied from it. */
  externalEvent?: ExternalEventMark
  /**
   * The change is a webhook delivery: recorded in the integration's dedupe ledger in the same
   * transaction, so the mark and its effect commit (or vanish) together. A delivery recorded before
   * writes nothing and comes back as `duplicate`.
   */
  delivery?: { integrationId: number; deliveryId: string }
  /**
   * The carrier checkpoints the event reported, kept (those not kept yet) in the change's transaction,
   * under the shipment's lock, with the messages `messages` makes of those added (written before the
   * change's own, given the row as read): a refused change keeps none, and their events' sequence follows
   * commit order. Kept also when the event is stale (they still say where the parcel was); not for a
   * duplicate delivery (its first delivery kept them).
   */
  checkpoints?: { rows: readonly NewCheckpoint[]; messages: (added: CheckpointRow[], current: ShipmentRow) => NewOutboxMessage[] }
  /** Synchronous and pure: what to write, given the row read inside the write transaction. */
  plan: (current: ShipmentRow) => ShipmentChangePlan
  /**
   * Synchronous: the outbox messages the change causes, given what it wrote; they are written in the
   * same transaction, claimed by `claimFor`'s instance so it delivers them right after the commit.
   */
  messages?: (outcome: Omit<ShipmentChangeOutcome, 'messages'>) => NewOutboxMessage[]
  claimFor?: OutboxClaim
  /**
   * The order store is the reference store, in this database: a claimed order advance sets the order's
   * status in the change's transaction (when the status exists), so no job and no second transaction.
   */
  advanceOrderInTransaction?: boolean
}

export interface ShipmentChangeOutcome {
  row: ShipmentRow
  /** The status read under the mutex, before the change. */
  previousStatus: string
  /** The id of the history row written, or null when the status did not change. */
  historyId: number | null
  /** True when this change claimed the order's advance; the caller applies it after commit. */
  orderAdvanceClaimed: boolean
  /** True when the claimed advance was applied in the change's transaction (see `advanceOrderInTransaction`). */
  orderAdvanced: boolean
  /** True when the external event was older than the last one applied, so nothing was written. */
  stale: boolean
  /** True when the delivery was recorded before, so nothing was written. */
  duplicate: boolean
  /** The outbox messages written with the change. */
  messages: OutboxRow[]
}

/**
 * The one wording of a quantity refused against a line, wherever it is refused (creating, changing items,
 * bringing a shipment back, a split rule's output): "Line 12 (MUG): 3 requested, 1 of 2 left to allocate."
 */
export function allocationRefusalMessage(
  item: Pick<StoredShipmentItem, 'lineItemId' | 'sku' | 'quantity' | 'ordered'>,
  /** What the order's other active shipments hold of the line. */
  allocatedElsewhere: number,
): string {
  const left = Math.max(0, item.ordered - allocatedElsewhere)
  return `Line ${item.lineItemId}${item.sku ? ` (${item.sku})` : ''}: ${item.quantity} requested, ${left} of ${item.ordered} left to allocate.`
}

/**
 * Thrown inside a write when the order's active shipments (enabled, not cancelled, not deleted) would
 * hold more of a line than was ordered; the write is rolled back.
 */
export class AllocationExceededError extends Error {
  constructor(
    readonly item: StoredShipmentItem,
    /** What the order's other active shipments hold of the line. */
    readonly allocatedElsewhere: number,
  ) {
    super(allocationRefusalMessage(item, allocatedElsewhere))
    this.name = 'AllocationExceededError'
  }
}

/** Enabled, not cancelled, not deleted: a shipment whose items count against the order's lines. */
export const holdsAllocation = (row: Pick<ShipmentRow, 'enabled' | 'status' | 'dateDeleted'>) =>
  row.enabled && row.status !== 'cancelled' && row.dateDeleted === null

/** What active shipments hold per line, by order. */
export function allocationsByOrder(rows: Iterable<Pick<ShipmentRow, 'orderId' | 'items'>>): Map<number, Map<number, number>> {
  const byOrder = new Map<number, Map<number, number>>()
  for (const row of rows) {
    if (row.items.length === 0) continue
    const allocated = byOrder.get(row.orderId) ?? new Map<number, number>()
    for (const item of row.items) allocated.set(item.lineItemId, (allocated.get(item.lineItemId) ?? 0) + item.quantity)
    byOrder.set(row.orderId, allocated)
  }
  return byOrder
}

/** What active shipments hold per line. */
export function allocatedByLine(rows: Iterable<Pick<ShipmentRow, 'items'>>): Map<number, number> {
  const allocated = new Map<number, number>()
  for (const row of rows) for (const item of row.items) allocated.set(item.lineItemId, (allocated.get(item.lineItemId) ?? 0) + item.quantity)
  return allocated
}

/** Throws AllocationExceededError for the first item that does not fit beside what other shipments hold. */
export function checkAllocation(items: readonly StoredShipmentItem[], allocatedElsewhere: ReadonlyMap<number, number>): void {
  for (const item of items) {
    const elsewhere = allocatedElsewhere.get(item.lineItemId) ?? 0
    if (elsewhere + item.quantity > item.ordered) throw new AllocationExceededError(item, elsewhere)
  }
}

/**
 * Whether the order may advance: no active shipment left unshipped, and, under the full-coverage rule,
 * every shippable line held in full by the shipped ones.
 */
export function orderComplete(active: ReadonlyArray<Pick<ShipmentRow, 'status' | 'items'>>, requireCoverage: CoverageRule | null | undefined): boolean {
  if (active.some((row) => row.status !== 'shipped')) return false
  if (!requireCoverage) return true
  if (requireCoverage.itemizedOnly && active.every((row) => row.items.length === 0)) return true
  const shipped = allocatedByLine(active)
  for (const [lineItemId, ordered] of requireCoverage.lines) if ((shipped.get(lineItemId) ?? 0) < ordered) return false
  return true
}

/**
 * The items a change must check against the order's other active shipments, or null: the shipment holds
 * items after it, and the change either sets them or brings the shipment back (enabled, restored,
 * un-cancelled).
 */
export function allocationToCheck(before: ShipmentRow, columns: ShipmentColumns): StoredShipmentItem[] | null {
  const after = { ...before, ...columns }
  const check = after.items.length > 0 && holdsAllocation(after) && (!holdsAllocation(before) || columns.items !== undefined)
  return check ? after.items : null
}

export interface ShipmentListQuery {
  orderId?: number
  status?: string
  /** Shipments whose reference starts with this text (ASCII letters in either case; see referenceSearchKeyOf), or whose tracking number is it (trackingNumberKey). */
  referenceStartsWith?: string
  /** Shipments with this tracking number, ignoring case, spaces and dashes (trackingNumberKey). */
  trackingNumber?: string
  /** Shipments whose external reference at this integration has this id. */
  externalReference?: { integrationId: number; externalId: string }
  includeDeleted: boolean
  limit: number
  offset: number
  /** Key paging: only shipments with a greater id (then `offset` is usually 0). */
  afterId?: number
}

/** Thrown by commitShipmentChange when the shipment does not exist. */
export class ShipmentMissingError extends Error {
  constructor(readonly shipmentId: number) {
    super(`Shipment ${shipmentId} does not exist.`)
    this.name = 'ShipmentMissingError'
  }
}

/** The outcome of a change that wrote nothing: a stale event or a delivery recorded before. */
export const unchangedOutcome = (row: ShipmentRow, why: { stale: boolean; duplicate: boolean }): ShipmentChangeOutcome => ({
  row,
  previousStatus: row.status,
  historyId: null,
  orderAdvanceClaimed: false,
  orderAdvanced: false,
  ...why,
  messages: [],
})

/** Shipments: read, change under the mutex, create, list, delete and restore. */
export interface ShipmentsStore {
  findShipment(id: number): Promise<ShipmentRow | undefined>
  /**
   * Writes columns in one atomic statement, without the mutex; undefined when there is no such shipment.
   * `fillEmpty`: columns written only where the stored value is null (detected carrier and tracking URL).
   * `unlessTrackingNumberChanges`: nothing is written (undefined) when the shipment holds a tracking
   * number other than `columns.trackingNumber`.
   */
  updateShipmentColumns(id: number, columns: ShipmentColumns, fillEmpty?: FillableColumns, options?: { unlessTrackingNumberChanges?: boolean }): Promise<ShipmentRow | undefined>
  /**
   * Applies a change in one write transaction: under the shipment's mutex when asked (the status is
   * re-read under it), with the history row, the external event mark and the order-advance claim.
   * Throws LockTimeoutError when the mutex was not had in time, and ShipmentMissing for no shipment.
   */
  commitShipmentChange(id: number, request: ShipmentChangeRequest): Promise<ShipmentChangeOutcome>
  /**
   * Creates shipments of an order numbered after its existing ones, each with its creation history
   * row, and the outbox messages `messages` makes of them, in one transaction serialized per order.
   * `plan` gets what the order's active shipments hold per line and returns one item list per
   * shipment to create (empty lists: order-level shipments); AllocationExceededError when they do not fit.
   * `attention`, when given, decides the order's attention row from what its active shipments hold
   * after the creation, kept in the same transaction (the package's own order store: no job to run).
   */
  createShipments(
    orderId: number,
    orderReference: string,
    plan: (allocated: ReadonlyMap<number, number>) => StoredShipmentItem[][],
    userId: string | null,
    messages?: { of: (rows: ShipmentRow[]) => NewOutboxMessage[]; claimFor: OutboxClaim },
    attention?: (allocated: ReadonlyMap<number, number>) => AttentionRow | null,
  ): Promise<{ rows: ShipmentRow[]; messages: OutboxRow[] }>
  listShipments(query: ShipmentListQuery): Promise<{ rows: ShipmentRow[]; total: number }>
  /** What the active shipments of these orders hold per line, by order (orders holding nothing are left out). */
  allocations(orderIds: readonly number[]): Promise<Map<number, Map<number, number>>>
  /** Newest first. */
  shipmentHistory(shipmentId: number): Promise<HistoryRow[]>
  /**
   * Sets or clears the deletion date (a second delete keeps the first date), with the outbox messages
   * `messages` makes of the row, in one transaction; undefined for no shipment. A restore that would
   * over-allocate a line throws AllocationExceededError.
   */
  setShipmentDeleted(
    id: number,
    deleted: boolean,
    now: Date,
    messages?: { of: (row: ShipmentRow) => NewOutboxMessage[]; claimFor: OutboxClaim },
  ): Promise<{ row: ShipmentRow; messages: OutboxRow[] } | undefined>
}

/** A completed order not fully covered by its active shipments, as the attention list keeps it. */
export interface AttentionRow {
  orderId: number
  reference: string
  statusHandle: string | null
  dateOrdered: Date | null
  customer: string | null
  linesMissing: number
  unitsMissing: number
}
