// The one asynchronous contract between the services and a database engine, composed of one contract
// per concern (shipments.ts, orders.ts, outbox.ts, notifications.ts, integrations.ts, exchange-activity.ts,
// overview.ts, parcels.ts, returns.ts, checkpoints.ts); every type of those is re-exported here, so a
// service imports the data layer from this one module. Each engine implements it in its own folder
// (sqlite/, postgres/); nothing above this layer imports a driver or a dialect.
import type { HealthQueries } from './health.js'
import type { ParcelPlan as ParcelPlanOf, ParcelStore as ParcelStoreOf } from './parcels.js'
import type { ReturnPlan as ReturnPlanOf, ReturnStore as ReturnStoreOf } from './returns.js'
import type { CheckpointData } from './checkpoints.js'
import type { ManifestStore as ManifestStoreOf } from './manifests.js'
import type { CustomsStore } from './customs.js'
import type { ShipmentsStore } from './shipments.js'
import type { NewOutboxMessage, OutboxClaim, OutboxRow, OutboxStore } from './outbox.js'
import type { NotificationStore } from './notifications.js'
import type { IntegrationsStore } from './integrations.js'
import type { ExchangeActivityStore } from './exchange-activity.js'
import type { AttentionStore, OverviewQueries } from './overview.js'
import type { AddressValues, OrdersStore } from './orders.js'
import type { LabelBatchStore as LabelBatchStoreOf } from './batches.js'

export * from './shipments.js'
export * from './outbox.js'
export * from './notifications.js'
export * from './integrations.js'
export * from './exchange-activity.js'
export * from './overview.js'
export * from './orders.js'
export * from './manifests.js'
export * from './customs.js'
export type { LabelBatchCounts, LabelBatchItemColumns, LabelBatchItemCursor, LabelBatchItemRow, LabelBatchItemState, LabelBatchRow, LabelBatchSettings, LabelBatchState, NewLabelBatchItem } from './batches.js'

/** Parcels, label operations, rate quotes and boxes, with the outbox's own types (see parcels.ts). */
export type ParcelStore = ParcelStoreOf<NewOutboxMessage, OutboxClaim, OutboxRow, AddressValues>
export type ReturnStore = ReturnStoreOf<NewOutboxMessage, OutboxClaim, OutboxRow>
export type ReturnPlan = ReturnPlanOf<NewOutboxMessage, OutboxClaim>
export type ParcelPlan = ParcelPlanOf<NewOutboxMessage, OutboxClaim>
/** Manifests (a carrier's end-of-day form) and the labels in them (see manifests.ts). */
export type ManifestStore = ManifestStoreOf<NewOutboxMessage, OutboxRow>
/** Label batches: durable jobs with a lease, their items and their end's event (see batches.ts). */
export type LabelBatchStore = LabelBatchStoreOf<NewOutboxMessage, OutboxClaim, OutboxRow>

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
 * return's label purchase (keyed by return id); `packStation` one shipment's finish at the pack station
 * (keyed by shipment id: its parcel added and its labels bought once, whatever station sends it twice).
 */
export type NamedLock = 'shipmentPush' | 'shipNotice' | 'labelPurchase' | 'returnLabel' | 'packStation'

/** The mutex name of spec 3.3. */
export const transitionLockName = (shipmentId: number) => `shipments:shipment:${shipmentId}:transition`

export interface DataLayer extends ShipmentsStore, IntegrationsStore, ExchangeActivityStore, OverviewQueries, AttentionStore, OrdersStore, HealthQueries {
  readonly engine: Engine

  /** A fact the package keeps about its data, or null. */
  packageState(key: string): Promise<string | null>
  setPackageState(key: string, value: string): Promise<void>

  /**
   * A stamp that changes when the package's tables change, for caches of query results: at once for
   * writes through this instance, and within `otherInstancesMs` (at most 1000) for other instances.
   */
  createChangeStamp(otherInstancesMs: number): () => Promise<string>

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
  /** Manifests: the day's labels eligible for one, and the manifests made (see manifests.ts). */
  readonly manifests: ManifestStore
  /** Label batches: a batch and its items, its lease, its items' outcomes and its end (see batches.ts). */
  readonly batches: LabelBatchStore
  /** Crossing borders: parcels' customs declarations and shipments' ship-to checks (see customs.ts). */
  readonly customs: CustomsStore
  /**
   * Runs `task` holding the named lock across processes and instances (a lock file on SQLite, a session
   * advisory lock on PostgreSQL), for critical sections with asynchronous work such as a push.
   */
  withNamedLock<T>(name: NamedLock, key: number, timeoutMs: number, task: () => Promise<T>): Promise<T>

  /** Closes what the data layer opened; a host's database stays open. */
  close(): Promise<void>
}
