// Named locks across processes on one SQLite file: rows in the file itself, taken and released in
// its write transactions, with a lease the holder renews.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { LockTimeoutError } from '../data-layer.js'
import { createMutex, type Mutex } from '../mutex.js'
import { writeTransaction, type SqliteDatabase } from './dialect.js'
import type { GroupCommit } from './group-commit.js'

export interface SqliteNamedLockOptions {
  /**
   * The connection's shared group commit (see group-commit.ts): a take commits in it, with the other
   * writes of the moment; it still answers only once committed, so another process sees the row before
   * the holder goes on. A release keeps its own transaction: no other request's failure can hold the
   * row until its lease runs out.
   */
  group: GroupCommit
  /** A lock whose holder stopped renewing it this long ago (a killed process) is taken over. */
  staleMs?: number
  /** Called when a held lock was lost (taken over after an event-loop stall longer than the lease). */
  onCompromised?: (lockName: string, error: Error) => void
}

/**
 * A named lock guards work that calls out (a label purchase, a push) while other processes share the
 * file. Lock files (a directory made and removed per lock, through the thread pool) cost two to four
 * milliseconds a lock, more than the purchase's own writes; a row costs two small writes of the file
 * the work writes anyway, the take in the shared group commit. Waiting callers of this process queue in
 * front; a lock another process holds is tried again with backoff until the deadline.
 */
export function createSqliteNamedLocks(db: SqliteDatabase, options: SqliteNamedLockOptions): Mutex {
  const staleMs = options.staleMs ?? 5000
  const queue = createMutex({ directory: null })
  const client = db.$client
  // Replaces a row only when its lease ran out; `changes` says whether this holder has the lock.
  const take = client.prepare(
    `INSERT INTO shipments_named_locks (name, holder, lease_until) VALUES (?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until WHERE lease_until < ?`,
  )
  const renew = client.prepare('UPDATE shipments_named_locks SET lease_until = ? WHERE name = ? AND holder = ?')
  const release = client.prepare('DELETE FROM shipments_named_locks WHERE name = ? AND holder = ?')

  async function acquire(name: string, deadline: number): Promise<string> {
    const holder = randomUUID()
    for (let attempt = 0; ; attempt++) {
      const now = Date.now()
      if ((await options.group.run(() => take.run(name, holder, now + staleMs, now).changes)) === 1) return holder
      if (Date.now() >= deadline) throw new LockTimeoutError(name)
      // Back off a little more each time, with jitter so competing processes do not march in step.
      await sleep(Math.min(2 + attempt * 2, 25) * (0.5 + Math.random()))
    }
  }

  return {
    async withLock(name, timeoutMs, task) {
      const deadline = Date.now() + timeoutMs
      return queue.withLock(name, timeoutMs, async () => {
        const holder = await acquire(name, deadline)
        // Renewed at half the lease, so a live holder never looks dead to the others.
        const renewal = setInterval(() => {
          try {
            if (writeTransaction(db, () => renew.run(Date.now() + staleMs, name, holder).changes) === 0) {
              clearInterval(renewal)
              options.onCompromised?.(name, new Error(`The lock ${name} was taken over by another process.`))
            }
          } catch (error) {
            options.onCompromised?.(name, error as Error)
          }
        }, staleMs / 2)
        renewal.unref()
        try {
          return await task()
        } finally {
          clearInterval(renewal)
          try {
            writeTransaction(db, () => release.run(name, holder))
          } catch (error) {
            // Left behind, the row's lease runs out and the next taker replaces it.
            options.onCompromised?.(name, error as Error)
          }
        }
      })
    },
  }
}
