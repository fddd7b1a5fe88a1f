// The data layer on SQLite (better-sqlite3): synchronous inside, the async contract outside. A write of
// several statements (a transition, a creation, an order and its tracking entry) runs in one IMMEDIATE
// transaction; a write of one statement (plain columns, an integration, a delivery claim) is a single
// autocommit statement, atomic on its own. Each concern's store is in the file named as its contract
// (shipments.ts, orders.ts, outbox.ts, ...), over the context this module makes (context.ts).
import { eq, sql } from 'drizzle-orm'
import type { DataLayer } from '../data-layer.js'
import { createSqliteBatchStore } from './batches.js'
import { createMutex } from '../mutex.js'
import { createSqliteNamedLocks } from './named-locks.js'
import { createSqliteNotificationStore } from './notifications.js'
import { createSqliteParcelStore } from './parcels.js'
import { createSqliteReturnStore } from './returns.js'
import { createSqliteManifestStore } from './manifests.js'
import { createSqliteCustomsStore } from './customs.js'
import { createSqliteCheckpointData, createSqliteCheckpointWriter } from './checkpoints.js'
import { createCheckpointer } from './checkpointer.js'
import type { SqliteContext } from './context.js'
import { createChangeStamp, lockDirectoryFor, onWriteCommit, withStatementCache, type SqliteDatabase } from './dialect.js'
import { createSqliteExchangeActivityStore } from './exchange-activity.js'
import { createSqliteHealthQueries } from './health.js'
import { createGroupCommit } from './group-commit.js'
import { createSqliteDeliveryLedger, createSqliteIntegrationsStore } from './integrations.js'
import { createSqliteOrdersStore } from './orders.js'
import { createSqliteOutboxStore, createSqliteOutboxWriter } from './outbox.js'
import { createSqliteAttentionStore, createSqliteOverviewQueries } from './overview.js'
import { packageState } from './schema.js'
import { createSqliteAllocationReader, createSqliteShipmentsStore } from './shipments.js'

export interface SqliteDataLayerOptions {
  /** Directory of the named locks' files (pushes); undefined: beside the database file; null: in-process only. */
  lockDirectory?: string | null
  /** Called when a held file lock was lost. */
  onLockCompromised?: (lockName: string, error: Error) => void
  /** Close the connection with the data layer (the package opened it); its checkpoints then run in a worker thread. */
  owned: boolean
  /** A checkpoint worker that failed: checkpoints are back inside commits. */
  onCheckpointError?: (error: Error) => void
}

export function createSqliteDataLayer(connection: SqliteDatabase, options: SqliteDataLayerOptions): DataLayer {
  const db = withStatementCache(connection)
  // Transitions of one shipment in this process wait here, in order, without touching the database;
  // across processes the IMMEDIATE transaction's write lock is the other half (spec 3.3).
  const queue = createMutex({ directory: null })
  // The connection's own wait for another writer; a transition waits at most until its lock deadline instead.
  const busyTimeoutMs = db.$client.pragma('busy_timeout', { simple: true }) as number
  // Updates and transitions that arrive together commit together (see group-commit.ts).
  const group = createGroupCommit(db, busyTimeoutMs)
  // A file the package opened is checkpointed off the event loop (see checkpointer.ts).
  const checkpointer = options.owned ? createCheckpointer(db, { onError: options.onCheckpointError }) : null
  if (checkpointer) onWriteCommit(db, checkpointer.committed)
  // Named locks held across asynchronous work (a push, a label purchase) cannot be a transaction: they
  // are rows of the file (see named-locks.ts), or in this process only when the host says it runs one
  // process per file (lockDirectory: null) or the database is in memory.
  const lockDirectory = options.lockDirectory === undefined ? lockDirectoryFor(db) : options.lockDirectory
  const namedLocks = lockDirectory === null ? createMutex({ directory: null }) : createSqliteNamedLocks(db, { onCompromised: options.onLockCompromised, group })

  const writeMessages = createSqliteOutboxWriter(db)
  const insertCheckpoints = createSqliteCheckpointWriter(db)
  const context: SqliteContext = { db, group, queue, writeMessages }
  // Read and written inside the transactions of more than one concern: prepared once, handed to each.
  const allocatedInOrder = createSqliteAllocationReader(db)
  const recordDelivery = createSqliteDeliveryLedger(db)
  // A package setting (the ship-from address, read by every rate and label): prepared once.
  const selectPackageState = db.select({ value: packageState.value }).from(packageState).where(eq(packageState.key, sql.placeholder('key'))).prepare()

  return {
    engine: 'sqlite',

    ...createSqliteShipmentsStore(context, { allocatedInOrder, recordDelivery, insertCheckpoints }),
    ...createSqliteIntegrationsStore(context, recordDelivery),
    ...createSqliteExchangeActivityStore(context),
    ...createSqliteHealthQueries(context),
    ...createSqliteOverviewQueries(context),
    ...createSqliteAttentionStore(context, allocatedInOrder),
    ...createSqliteOrdersStore(context),

    async packageState(key) {
      return selectPackageState.get({ key })?.value ?? null
    },

    async setPackageState(key, value) {
      db.insert(packageState).values({ key, value }).onConflictDoUpdate({ target: packageState.key, set: { value } }).run()
    },

    createChangeStamp(otherInstancesMs) {
      const stamp = createChangeStamp(db, otherInstancesMs)
      return async () => stamp()
    },

    notifications: createSqliteNotificationStore(context),

    parcels: createSqliteParcelStore(context),
    checkpoints: createSqliteCheckpointData(context, insertCheckpoints),

    batches: createSqliteBatchStore(context),

    returns: createSqliteReturnStore(context),

    manifests: createSqliteManifestStore(context),
    customs: createSqliteCustomsStore(context),

    outbox: createSqliteOutboxStore(context),

    async withNamedLock(name, key, timeoutMs, task) {
      return namedLocks.withLock(`${name}:${key}`, timeoutMs, task)
    },

    async close() {
      await checkpointer?.close()
      group.flush()
      if (options.owned) db.$client.close()
    },
  }
}

