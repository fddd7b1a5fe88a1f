// The data layer on PostgreSQL (node-postgres): every write a transaction from the pool; the transition
// mutex is an in-process queue (so waiting requests do not hold connections) in front of a
// transaction-scoped advisory lock, held until commit and released by the server if the process dies.
// Each concern's store is in the file named as its contract (shipments.ts, orders.ts, outbox.ts, ...),
// over the context this module makes (context.ts).
import { eq } from 'drizzle-orm'
import type { DataLayer } from '../data-layer.js'
import { createPostgresBatchStore } from './batches.js'
import { createMutex } from '../mutex.js'
import { createAdvisoryLockSession } from './lock-session.js'
import { createPostgresGroupCommit } from './group-commit.js'
import { createPostgresNotificationStore } from './notifications.js'
import { createPostgresParcelStore } from './parcels.js'
import { createPostgresReturnStore } from './returns.js'
import { createPostgresManifestStore } from './manifests.js'
import { createPostgresCustomsStore } from './customs.js'
import { createPostgresCheckpointData } from './checkpoints.js'
import { createPostgresChangeStamp, type PostgresDatabase } from './connection.js'
import type { PostgresContext } from './context.js'
import { createPostgresExchangeActivityStore } from './exchange-activity.js'
import { createPostgresHealthQueries } from './health.js'
import { createPostgresIntegrationsStore } from './integrations.js'
import { ADVISORY_LOCK_CLASS } from './locks.js'
import { createPostgresOrdersStore } from './orders.js'
import { createPostgresOutboxStore } from './outbox.js'
import { createPostgresAttentionStore, createPostgresOverviewQueries } from './overview.js'
import { packageState } from './schema.js'
import { createPostgresShipmentsStore } from './shipments.js'

export function createPostgresDataLayer(db: PostgresDatabase, options: { owned: boolean; groupCommit: boolean }): DataLayer {
  // Waiting requests queue here, not on the server: N requests for one shipment use one connection.
  const queue = createMutex({ directory: null })
  const lockSession = createAdvisoryLockSession(db.$client)
  let localWrites = 0
  const wrote = <T>(result: T) => {
    localWrites++
    return result
  }
  const group = options.groupCommit ? createPostgresGroupCommit(db) : null
  const context: PostgresContext = { db, queue, wrote, localWrites: () => localWrites, group }

  return {
    engine: 'postgres',

    ...createPostgresShipmentsStore(context),
    ...createPostgresIntegrationsStore(context),
    ...createPostgresExchangeActivityStore(context),
    ...createPostgresHealthQueries(context),
    ...createPostgresOverviewQueries(context),
    ...createPostgresAttentionStore(context),
    ...createPostgresOrdersStore(context),

    async packageState(key) {
      const [row] = await db.select({ value: packageState.value }).from(packageState).where(eq(packageState.key, key))
      return row?.value ?? null
    },

    async setPackageState(key, value) {
      await db.insert(packageState).values({ key, value }).onConflictDoUpdate({ target: packageState.key, set: { value } })
    },

    createChangeStamp(otherInstancesMs) {
      return createPostgresChangeStamp(db, () => localWrites, otherInstancesMs)
    },

    notifications: createPostgresNotificationStore(context),

    parcels: createPostgresParcelStore(context),
    checkpoints: createPostgresCheckpointData(context),

    batches: createPostgresBatchStore(context),

    returns: createPostgresReturnStore(context),

    manifests: createPostgresManifestStore(context),
    customs: createPostgresCustomsStore(context),

    outbox: createPostgresOutboxStore(context),

    async withNamedLock(name, key, timeoutMs, task) {
      // In-process first, so waiting callers do not each try the server; then a session advisory lock
      // on the lock session's own connection (never one of the pool's, which the task needs).
      const deadline = Date.now() + timeoutMs
      return queue.withLock(`${name}:${key}`, timeoutMs, async () => {
        const release = await lockSession.acquire(ADVISORY_LOCK_CLASS[name], key, `${name}:${key}`, deadline)
        try {
          return await task()
        } finally {
          await release()
        }
      })
    },

    async close() {
      await lockSession.close()
      if (options.owned) await db.$client.end()
    },
  }
}
