// The one asynchronous contract between the services and a database engine. Each engine implements it
// in its own folder (sqlite/, postgres/); nothing above this layer imports a driver or a dialect.
import type { ParcelPlan as ParcelPlanOf, ParcelStore as ParcelStoreOf, StoredParcel } from './parcels.js'
import type { ReturnPlan as ReturnPlanOf, ReturnStore as ReturnStoreOf } from './returns.js'
import type { CheckpointData } from './checkpoints.js'
import type { CompletedOrder, ExportOrdersPage, ExportOrdersQuery, OrderLine, OrderSummary } from '../orders/order-store.js'

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

export interface IntegrationRow {
  id: number
  name: string
  handle: string
  /** "true"/"false", or an environment-variable reference such as "$WEBHOOKS_ENABLED". */
  enabled: string
  providerId: string | null
  settings: Record<string, unknown>
  /** External status code to internal shipment status (inbound). */
  statusMap: Record<string, string>
  /** Internal shipment status to the integration's own code (outbound, sent by a push). */
  outboundStatusMap: Record<string, string>
  /** Shipment statuses whose reaching pushes the shipment to the integration. */
  pushOn: string[]
  createdAt: Date
  updatedAt: Date
}

/** One request of the order exchange, as its activity log keeps it. */
export interface ExchangeActivityRow {
  id: number
  /** export, shipnotify, or what the request named (empty when it named none). */
  action: string
  page: number | null
  orderNumber: string | null
  ordersExported: number | null
  statusCode: number
  /** A short reason: the error message a refused request got; null when it succeeded. */
  reason: string | null
  createdAt: Date
}

export type NewExchangeActivityRow = Omit<ExchangeActivityRow, 'id'>

/** What became of a recorded delivery: `applied` (the default of a record without one), `stale`, `unmapped-status`, ... */
export interface DeliveryOutcome {
  outcome: string
  reason?: string
}

/** A webhook delivery recorded for an integration (dedupe ledger), with what became of it. */
export interface DeliveryRow {
  deliveryId: string
  outcome: Record<string, unknown>
  createdAt: Date
}

export type IntegrationValues = Omit<IntegrationRow, 'id' | 'createdAt'>

/** A shipment whose last push to an integration failed, for the admin overview. */
export interface FailingPushRow {
  shipmentId: number
  shipmentReference: string
  integrationHandle: string
  lastPushAt: Date | null
  lastPushError: string
  pushAttempts: number
}

export interface ExternalReferenceRow {
  integrationHandle: string
  externalId: string | null
  externalUrl: string | null
  /** The outbound direction: the last push or cancel attempted, its error (null when it succeeded), the attempts made. */
  lastPushAt: Date | null
  lastPushError: string | null
  pushAttempts: number
}

/** A message for the outbox: an event for listeners and subscriptions, or a follow-up job. */
export interface NewOutboxMessage {
  kind: 'event' | 'job'
  name: string
  /** Messages with one key are handled in commit order (a shipment's events: `shipment:<id>`). */
  orderingKey: string
  payload: Record<string, unknown>
  /** Unique; a message written again with the same id is ignored (idempotent follow-ups). Default: a new UUID version 7 (in creation order, see newMessageId). */
  messageId?: string
  /** Not before this time. Default: now. */
  availableAt?: Date
}

/** `skipped`: a job that found nothing to do (its notification disabled or deleted, say): not sent, not failed. */
export type OutboxState = 'pending' | 'done' | 'skipped' | 'failed'

export interface OutboxRow {
  id: number
  messageId: string
  kind: 'event' | 'job'
  name: string
  orderingKey: string
  payload: Record<string, unknown>
  state: OutboxState
  attempts: number
  availableAt: Date
  claimedUntil: Date | null
  claimedBy: string | null
  lastError: string | null
  createdAt: Date
  doneAt: Date | null
}

export interface OutboxAttemptRow {
  id: number
  outboxId: number
  attemptedAt: Date
  statusCode: number | null
  durationMs: number
  error: string | null
}

/** What one attempt of a job came to. */
export interface OutboxAttemptRecord {
  attempt: Omit<OutboxAttemptRow, 'id' | 'outboxId'>
  /** done: finished; retry: try again at `retryAt`; failed: given up. */
  outcome: { state: 'done' } | { state: 'skipped' } | { state: 'retry'; retryAt: Date } | { state: 'failed' }
  /** Messages written in the same transaction (events a job's success causes). */
  followUps?: NewOutboxMessage[]
}

export interface OutboxListQuery {
  state?: OutboxState
  kind?: 'event' | 'job'
  name?: string
  /** Only messages whose ordering key starts with this (letters, digits, ":" and "-"). */
  orderingKeyPrefix?: string
  /** Only messages with an id greater than this (paging forward). */
  afterId?: number
  /** The newest first (by id), instead of the oldest. */
  newestFirst?: boolean
  limit: number
}

export interface WebhookSubscriptionRow {
  id: number
  url: string
  events: string[]
  secret: string
  description: string | null
  enabled: boolean
  failureCount: number
  disabledReason: string | null
  createdAt: Date
  updatedAt: Date
}

export type WebhookSubscriptionValues = Omit<WebhookSubscriptionRow, 'id' | 'createdAt'>

/** A stored customer notification definition. */
export interface NotificationRow {
  id: number
  name: string
  enabled: boolean
  statuses: string[]
  /** Carrier milestones whose scan sends it. */
  triggers: string[]
  recipient: string
  addresses: string[]
  subject: string
  html: string
  text: string
  language: string | null
  createdAt: Date
  updatedAt: Date
}

export type NotificationValues = Omit<NotificationRow, 'id' | 'createdAt'>

/** Customer notification definitions and the shipments' public tracking link versions. */
export interface NotificationStore {
  list(): Promise<NotificationRow[]>
  find(id: number): Promise<NotificationRow | undefined>
  insert(values: NotificationValues): Promise<NotificationRow>
  update(id: number, values: Partial<NotificationValues>): Promise<NotificationRow | undefined>
  remove(id: number): Promise<boolean>
  /** The version a shipment's tracking link is signed with (0 until revoked once). */
  trackingLinkVersion(shipmentId: number): Promise<number>
  /** Raises the version, so every link signed before stops working; returns the new one. */
  revokeTrackingLink(shipmentId: number): Promise<number>
}

/** The outbox and the outbound webhook subscriptions, on the engine's tables. */
export interface OutboxStore {
  /**
   * Writes messages in a transaction of their own (a change's messages are written with the change).
   * `claimFor`: claimed at once by this instance for that long, so it handles them itself right away;
   * except, left unclaimed to wait their turn, an event behind an older pending event of its key that
   * this instance does not hold, and a job behind any older pending job of its key.
   */
  enqueue(messages: NewOutboxMessage[], claimFor: { instanceId: string; leaseMs: number } | null): Promise<OutboxRow[]>
  /**
   * Claims up to `limit` due messages for `instanceId` for `leaseMs`, oldest first: pending, available,
   * not claimed (or their claim expired); an event only when no earlier pending event of its key waits
   * for a retry or is held by another instance (a whole run at once), a job only as the first pending job
   * of its key. Instances claim one at a time, so they never split a run. A job taken over from a claim
   * that ran out (its instance died or stopped answering mid-attempt) gets a logged attempt with
   * TAKEN_OVER_ATTEMPT_ERROR and counts it, so the log shows the attempt whose outcome is unknown.
   */
  claimDue(instanceId: string, leaseMs: number, limit: number): Promise<OutboxRow[]>
  /**
   * The heartbeat: extends this instance's claims on `ids` (messages it still works on) to `leaseMs`
   * from now. A claim another instance has taken since is left alone.
   */
  renewClaims(instanceId: string, ids: number[], leaseMs: number): Promise<void>
  /**
   * Marks messages done and writes `followUps` in the same transaction (a follow-up whose id was
   * written before is skipped), claimed by `claimFor`; returns the follow-ups written.
   */
  complete(ids: number[], followUps: NewOutboxMessage[], claimFor: OutboxClaim | null): Promise<OutboxRow[]>
  /**
   * Logs one attempt of a job and moves it on (done, retried later, failed), with its follow-ups, as
   * `complete`. Done or failed, it hands off: the next pending job of its key, when nobody holds it, is
   * claimed by `claimFor` in the same transaction and returned after the follow-ups.
   */
  recordAttempt(id: number, record: OutboxAttemptRecord, claimFor: OutboxClaim | null): Promise<OutboxRow[]>
  /** Sets a finished or failed job pending again, available now, with its attempts counted from zero. */
  requeue(messageId: string): Promise<OutboxRow | undefined>
  find(messageId: string): Promise<OutboxRow | undefined>
  list(query: OutboxListQuery): Promise<OutboxRow[]>
  attempts(outboxId: number): Promise<OutboxAttemptRow[]>
  /**
   * Deletes at most `limit` done, skipped and failed messages finished before `before`, the oldest
   * first, in one short statement of its own; returns how many (fewer than `limit`: none are left).
   */
  prune(before: Date, limit: number): Promise<number>

  listSubscriptions(): Promise<WebhookSubscriptionRow[]>
  findSubscription(id: number): Promise<WebhookSubscriptionRow | undefined>
  insertSubscription(values: WebhookSubscriptionValues): Promise<WebhookSubscriptionRow>
  updateSubscription(id: number, values: Partial<WebhookSubscriptionValues>): Promise<WebhookSubscriptionRow | undefined>
  deleteSubscription(id: number): Promise<boolean>
  /**
   * Counts a failed attempt against the subscription (or, with `succeeded`, clears the count); when the
   * count reaches `disableAt` the subscription is disabled with `reason`. Returns the row after.
   */
  recordSubscriptionResult(id: number, succeeded: boolean, disableAt: number, reason: string): Promise<WebhookSubscriptionRow | undefined>

  /** Records a push or cancel attempt on the shipment's external reference at the integration. */
  recordPushAttempt(shipmentId: number, integrationId: number, at: Date, error: string | null, reference: { externalId?: string | null; externalUrl?: string | null }): Promise<void>
}

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
  /** Synchronous and pure: what to write, given the row read inside the write transaction. */
  plan: (current: ShipmentRow) => ShipmentChangePlan
  /**
   * Synchronous: the outbox messages the change causes, given what it wrote; they are written in the
   * same transaction, claimed by `claimFor`'s instance so it delivers them right after the commit.
   */
  messages?: (outcome: Omit<ShipmentChangeOutcome, 'messages'>) => NewOutboxMessage[]
  claimFor?: OutboxClaim
}

/**
 * The attempt logged for a job whose holder's claim ran out: it may have been sent (a delivery sent just
 * before the death is sent again, with the same id) or not.
 */
export const TAKEN_OVER_ATTEMPT_ERROR = 'Outcome unknown: the instance that held this job stopped renewing its claim (it died or hung) during or before an attempt; another instance took it over.'

/** Messages written with a change are claimed by the writing instance for a lease. */
export interface OutboxClaim {
  instanceId: string
  leaseMs: number
}

export interface ShipmentChangeOutcome {
  row: ShipmentRow
  /** The status read under the mutex, before the change. */
  previousStatus: string
  /** The id of the history row written, or null when the status did not change. */
  historyId: number | null
  /** True when this change claimed the order's advance; the caller applies it after commit. */
  orderAdvanceClaimed: boolean
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

/** An order as a ship notification changes it. */
export interface NotifiedOrder {
  statusHandle: string | null
  fields: Record<string, unknown>
}

/** An order status of the reference store. */
export interface OrderStatusRow {
  handle: string
  name: string
  isDefault: boolean
}

/** A reference-store order as written; decimals are text, so no binary rounding reaches money. */
export interface OrderValues {
  number: string
  reference: string
  email: string | null
  customerId: number | null
  statusHandle: string | null
  isCompleted: boolean
  totalPrice: string
  totalTax: string
  totalShipping: string
  totalDiscount: string
  couponCode: string | null
  paymentMethod: string | null
  shippingMethod: string | null
  customerNotes: string | null
  internalNotes: string | null
  isGift: boolean
  giftMessage: string | null
  customField1: string | null
  customField2: string | null
  customField3: string | null
  fields: Record<string, unknown>
  dateOrdered: Date | null
  dateUpdated: Date
}

export interface AddressValues {
  kind: 'shipping' | 'billing'
  fullName: string | null
  company: string | null
  address1: string | null
  address2: string | null
  city: string | null
  state: string | null
  postalCode: string | null
  countryCode: string | null
  phone: string | null
  email: string | null
}

export interface LineItemValues {
  sku: string | null
  name: string
  shippable: boolean
  weight: number | null
  weightUnit: string | null
  quantity: number
  price: string
  imageUrl: string | null
  options: Record<string, string>
  /** The unit's size for packing (exact decimals in `dimensionUnit`). */
  length?: string | null
  width?: string | null
  height?: string | null
  dimensionUnit?: string | null
}

/** Parcels, label operations, rate quotes and boxes, with the outbox's own types (see parcels.ts). */
export type ParcelStore = ParcelStoreOf<NewOutboxMessage, OutboxClaim, OutboxRow, AddressValues>
export type ReturnStore = ReturnStoreOf<NewOutboxMessage, OutboxClaim, OutboxRow>
export type ReturnPlan = ReturnPlanOf<NewOutboxMessage, OutboxClaim>
export type ParcelPlan = ParcelPlanOf<NewOutboxMessage, OutboxClaim>

export type Engine = 'sqlite' | 'postgres'

/** Thrown when a named lock could not be had in time. */
export class LockTimeoutError extends Error {
  constructor(readonly lockName: string) {
    super(`Timed out waiting for lock ${lockName}`)
    this.name = 'LockTimeoutError'
  }
}

/**
 * Locks held across asynchronous work: `shipmentPush` keeps one shipment's pushes and cancels one at a
 * time; `shipNotice` one order's ShipStation notifications with items (keyed by order id);
 * `labelPurchase` one parcel's label purchases and voids (keyed by parcel id); `returnLabel` one
 * return's label purchase (keyed by return id).
 */
export type NamedLock = 'shipmentPush' | 'shipNotice' | 'labelPurchase' | 'returnLabel'

/** The mutex name of spec 3.3. */
export const transitionLockName = (shipmentId: number) => `shipments:shipment:${shipmentId}:transition`

export interface DataLayer {
  readonly engine: Engine

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
   */
  createShipments(
    orderId: number,
    orderReference: string,
    plan: (allocated: ReadonlyMap<number, number>) => StoredShipmentItem[][],
    userId: string | null,
    messages?: { of: (rows: ShipmentRow[]) => NewOutboxMessage[]; claimFor: OutboxClaim },
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

  findIntegration(handle: string): Promise<IntegrationRow | undefined>
  listIntegrations(): Promise<IntegrationRow[]>
  insertIntegration(values: IntegrationValues): Promise<IntegrationRow>
  updateIntegration(id: number, values: IntegrationValues): Promise<IntegrationRow>
  deleteIntegration(id: number): Promise<void>
  /**
   * Records a delivery that changes no shipment (its effect-bearing twin is commitShipmentChange's
   * `delivery`); false when it was recorded before (a unique key decides a race).
   */
  recordDelivery(integrationId: number, deliveryId: string, outcome: DeliveryOutcome): Promise<boolean>
  /** The newest deliveries recorded for an integration, newest first. */
  recentDeliveries(integrationId: number, limit: number): Promise<DeliveryRow[]>
  /**
   * Appends a row to the order exchange's activity log. Every `retention.every`th row also drops the
   * answered rows (status below 400) beyond the newest `retention.keep` and the refused ones beyond the
   * newest `retention.keepRefused`, so a request usually costs one statement, refusals never evict
   * answered requests, and the log never holds more than keep + keepRefused + every - 1 rows.
   */
  recordExchangeActivity(entry: NewExchangeActivityRow, retention: { keep: number; keepRefused: number; every: number }): Promise<void>
  /** The newest rows of the activity log, newest first; with `refused`, only refused (true) or answered (false) ones. */
  exchangeActivity(limit: number, refused?: boolean): Promise<ExchangeActivityRow[]>
  setExternalReference(shipmentId: number, integrationId: number, externalId: string | null, externalUrl: string | null): Promise<void>
  externalReferences(shipmentId: number): Promise<ExternalReferenceRow[]>

  // The admin overview: each query bounded, whatever the number of shipments.
  /** Shipments not deleted, by status (statuses without any are left out): read from the kept counts, never counted. */
  countShipmentsByStatus(): Promise<Record<string, number>>

  // The attention list, kept as rows (see the attentionRefresh job).
  /**
   * Decides the order's attention row from what its active shipments hold now, under the order's lock
   * (so refreshes of one order never cross): `decide` answers the row, or null for none (covered, not
   * completed, or gone). Returns what was kept.
   */
  refreshAttention(orderId: number, decide: (allocated: ReadonlyMap<number, number>) => AttentionRow | null): Promise<AttentionRow | null>
  /** Kept rows, oldest order first: after `afterOrderId` (key paging) or from `offset`, at most `limit`. */
  attentionRows(query: { afterOrderId?: number | undefined; offset?: number | undefined; limit: number }): Promise<AttentionRow[]>
  /** How many rows are kept (a count of the attention rows only). */
  countAttentionRows(): Promise<number>
  /** A fact the package keeps about its data, or null. */
  packageState(key: string): Promise<string | null>
  setPackageState(key: string, value: string): Promise<void>
  /**
   * Shipments not deleted shipped in [from, to), counted per quarter hour since the epoch
   * (`floor(ms / 900000)`): at most one row per quarter hour of the window, so a busy store costs no
   * more rows than a quiet one, and days in any timezone (offsets are whole quarter hours) add up exactly.
   */
  countShippedByQuarterHour(from: Date, to: Date): Promise<Array<{ quarterHour: number; count: number }>>
  /**
   * Enabled shipments, not deleted, neither shipped nor cancelled, scheduled to ship before `now`: the
   * earliest scheduled first, at most `limit`, and how many there are.
   */
  lateShipments(now: Date, limit: number): Promise<{ rows: ShipmentRow[]; total: number }>
  /** External references whose last push failed (shipment not deleted): the newest attempt first, at most `limit`, and how many. */
  failingPushes(limit: number): Promise<{ rows: FailingPushRow[]; total: number }>
  /** The activity log's newest row of this action, answered or refused. */
  newestExchangeActivity(action: string): Promise<ExchangeActivityRow | undefined>

  /**
   * A stamp that changes when the package's tables change, for caches of query results: at once for
   * writes through this instance, and within `otherInstancesMs` (at most 1000) for other instances.
   */
  createChangeStamp(otherInstancesMs: number): () => Promise<string>

  findOrder(orderId: number): Promise<OrderSummary | undefined>
  /** The reference store's orders with these ids that exist (at most a page's worth: one query). */
  findOrders(orderIds: readonly number[]): Promise<OrderSummary[]>
  /** The reference store's lines of an order (id order); undefined for no order. */
  orderLines(orderId: number): Promise<OrderLine[] | undefined>
  /** The reference store's completed orders after `afterId` by id, with their lines. */
  listCompletedOrders(query: { afterId: number; limit: number }): Promise<CompletedOrder[]>
  findOrderByReference(reference: string): Promise<OrderSummary | undefined>
  /** False when no order status has this handle (nothing is written then). */
  setOrderStatus(orderId: number, statusHandle: string): Promise<boolean>
  orderStatusExists(statusHandle: string): Promise<boolean>
  /** Creates or renames the status with this handle; a default one makes every other status not default. */
  saveOrderStatus(status: OrderStatusRow): Promise<void>
  listOrderStatuses(): Promise<OrderStatusRow[]>
  /** Inserts an order with its addresses and line items in one transaction; 'duplicate' when its reference or number is taken. */
  insertOrder(order: OrderValues, addresses: AddressValues[], items: LineItemValues[]): Promise<number | 'duplicate'>
  /** Writes order columns; false when there is no such order, 'duplicate' when a new reference or number is taken. */
  updateOrder(orderId: number, columns: Partial<OrderValues>): Promise<boolean | 'duplicate'>
  /**
   * Reads the order under a write lock, lets `plan` decide its new fields, and saves status and fields
   * when anything changed. 'no-status' when the status does not exist, 'no-order' when the order does not.
   */
  updateNotifiedOrder<T extends { fields: Record<string, unknown> }>(
    orderId: number,
    statusHandle: string,
    plan: (order: NotifiedOrder) => T,
  ): Promise<{ outcome: T; changed: boolean } | 'no-status' | 'no-order'>
  exportOrders(query: ExportOrdersQuery): Promise<ExportOrdersPage>

  /** The transactional outbox and the webhook subscriptions. */
  readonly outbox: OutboxStore
  /** Customer notifications and tracking links. */
  readonly notifications: NotificationStore
  /** Parcels, label operations, rate quotes and the box catalogue (see parcels.ts). */
  readonly parcels: ParcelStore
  /** Returns (reverse shipments) in the allocation ledger (see returns.ts). */
  readonly returns: ReturnStore
  /** Carrier checkpoints of shipments (see checkpoints.ts). */
  readonly checkpoints: CheckpointData<NewOutboxMessage, OutboxClaim, OutboxRow>
  /**
   * Runs `task` holding the named lock across processes and instances (a lock file on SQLite, a session
   * advisory lock on PostgreSQL), for critical sections with asynchronous work such as a push.
   */
  withNamedLock<T>(name: NamedLock, key: number, timeoutMs: number, task: () => Promise<T>): Promise<T>

  /** Closes what the data layer opened; a host's database stays open. */
  close(): Promise<void>
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
  ...why,
  messages: [],
})
