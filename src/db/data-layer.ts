// The one asynchronous contract between the services and a database engine. Each engine implements it
// in its own folder (sqlite/, postgres/); nothing above this layer imports a driver or a dialect.
import type { ExportOrdersPage, ExportOrdersQuery, OrderSummary } from '../orders/order-store.js'

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
  createdAt: Date
  updatedAt: Date
}

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

/** A webhook delivery recorded for an integration (dedupe ledger), with what became of it. */
export interface DeliveryRow {
  deliveryId: string
  outcome: Record<string, unknown>
  createdAt: Date
}

export type IntegrationValues = Omit<IntegrationRow, 'id' | 'createdAt'>

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
  /** Unique; a message written again with the same id is ignored (idempotent follow-ups). Default: a random UUID. */
  messageId?: string
  /** Not before this time. Default: now. */
  availableAt?: Date
}

export type OutboxState = 'pending' | 'done' | 'failed'

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
  outcome: { state: 'done' } | { state: 'retry'; retryAt: Date } | { state: 'failed' }
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

/** The outbox and the outbound webhook subscriptions, on the engine's tables. */
export interface OutboxStore {
  /**
   * Writes messages in a transaction of their own (a change's messages are written with the change).
   * `claimFor`: claimed at once by this instance for that long, so it handles them itself right away.
   */
  enqueue(messages: NewOutboxMessage[], claimFor: { instanceId: string; leaseMs: number } | null): Promise<OutboxRow[]>
  /**
   * Claims up to `limit` due messages for `instanceId` for `leaseMs`: pending, available, not claimed
   * (or their claim expired), and with no earlier pending message of the same key, oldest first.
   */
  claimDue(instanceId: string, leaseMs: number, limit: number): Promise<OutboxRow[]>
  /**
   * Marks messages done and writes `followUps` in the same transaction (a follow-up whose id was
   * written before is skipped), claimed by `claimFor`; returns the follow-ups written.
   */
  complete(ids: number[], followUps: NewOutboxMessage[], claimFor: OutboxClaim | null): Promise<OutboxRow[]>
  /** Logs one attempt of a job and moves it on (done, retried later, failed), with its follow-ups, as `complete`. */
  recordAttempt(id: number, record: OutboxAttemptRecord, claimFor: OutboxClaim | null): Promise<OutboxRow[]>
  /** Sets a finished or failed job pending again, available now, with its attempts counted from zero. */
  requeue(messageId: string): Promise<OutboxRow | undefined>
  find(messageId: string): Promise<OutboxRow | undefined>
  list(query: OutboxListQuery): Promise<OutboxRow[]>
  attempts(outboxId: number): Promise<OutboxAttemptRow[]>
  /** Deletes done and failed messages finished before `before`; returns how many. */
  prune(before: Date): Promise<number>

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
  /** Synchronous and pure: what to write, given the row read inside the write transaction. */
  plan: (current: ShipmentRow) => ShipmentChangePlan
  /**
   * Synchronous: the outbox messages the change causes, given what it wrote; they are written in the
   * same transaction, claimed by `claimFor`'s instance so it delivers them right after the commit.
   */
  messages?: (outcome: Omit<ShipmentChangeOutcome, 'messages'>) => NewOutboxMessage[]
  claimFor?: OutboxClaim
}

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
  /** The outbox messages written with the change. */
  messages: OutboxRow[]
}

export interface ShipmentListQuery {
  orderId?: number
  status?: string
  /** Shipments whose reference contains this text (case-insensitive). */
  referenceContains?: string
  includeDeleted: boolean
  limit: number
  offset: number
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
  weight: number | null
  weightUnit: string | null
  quantity: number
  price: string
  imageUrl: string | null
  options: Record<string, string>
}

export type Engine = 'sqlite' | 'postgres'

/** Thrown when a named lock could not be had in time. */
export class LockTimeoutError extends Error {
  constructor(readonly lockName: string) {
    super(`Timed out waiting for lock ${lockName}`)
    this.name = 'LockTimeoutError'
  }
}

/** Locks held across asynchronous work: `shipmentPush` keeps one shipment's pushes and cancels one at a time. */
export type NamedLock = 'shipmentPush'

/** The mutex name of spec 3.3. */
export const transitionLockName = (shipmentId: number) => `shipments:shipment:${shipmentId}:transition`

export interface DataLayer {
  readonly engine: Engine

  findShipment(id: number): Promise<ShipmentRow | undefined>
  /** Writes columns in one atomic statement, without the mutex; undefined when there is no such shipment. */
  updateShipmentColumns(id: number, columns: ShipmentColumns): Promise<ShipmentRow | undefined>
  /**
   * Applies a change in one write transaction: under the shipment's mutex when asked (the status is
   * re-read under it), with the history row, the external event mark and the order-advance claim.
   * Throws LockTimeoutError when the mutex was not had in time, and ShipmentMissing for no shipment.
   */
  commitShipmentChange(id: number, request: ShipmentChangeRequest): Promise<ShipmentChangeOutcome>
  /**
   * Creates `count` shipments of an order numbered after its existing ones, each with its creation
   * history row, and the outbox messages `messages` makes of them, in one transaction.
   */
  createShipments(
    orderId: number,
    orderReference: string,
    count: number,
    userId: string | null,
    messages?: { of: (rows: ShipmentRow[]) => NewOutboxMessage[]; claimFor: OutboxClaim },
  ): Promise<{ rows: ShipmentRow[]; messages: OutboxRow[] }>
  listShipments(query: ShipmentListQuery): Promise<{ rows: ShipmentRow[]; total: number }>
  /** Newest first. */
  shipmentHistory(shipmentId: number): Promise<HistoryRow[]>
  /**
   * Sets or clears the deletion date (a second delete keeps the first date), with the outbox messages
   * `messages` makes of the row, in one transaction; undefined for no shipment.
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
  /** True when this call recorded the delivery (a unique key decides a race); false when it was recorded before. */
  claimDelivery(integrationId: number, deliveryId: string): Promise<boolean>
  releaseDelivery(integrationId: number, deliveryId: string): Promise<void>
  /** The newest deliveries recorded for an integration, newest first. */
  recentDeliveries(integrationId: number, limit: number): Promise<DeliveryRow[]>
  /**
   * Appends a row to the order exchange's activity log. Every `retention.every`th row also drops the
   * rows beyond the newest `retention.keep`, so a request usually costs one statement and the log
   * never holds more than keep + every - 1 rows.
   */
  recordExchangeActivity(entry: NewExchangeActivityRow, retention: { keep: number; every: number }): Promise<void>
  /** The newest rows of the activity log, newest first. */
  exchangeActivity(limit: number): Promise<ExchangeActivityRow[]>
  setExternalReference(shipmentId: number, integrationId: number, externalId: string | null, externalUrl: string | null): Promise<void>
  externalReferences(shipmentId: number): Promise<ExternalReferenceRow[]>

  /**
   * A stamp that changes when the package's tables change, for caches of query results: at once for
   * writes through this instance, and within `otherInstancesMs` (at most 1000) for other instances.
   */
  createChangeStamp(otherInstancesMs: number): () => Promise<string>

  findOrder(orderId: number): Promise<OrderSummary | undefined>
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
