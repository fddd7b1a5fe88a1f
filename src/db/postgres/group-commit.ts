// Group commit on PostgreSQL: changes that arrive while the lanes are busy share one transaction, so one
// WAL flush (and one BEGIN and COMMIT) serves them all. The SQLite engine does the same per turn of the
// event loop (sqlite/group-commit.ts); the semantics below are the same on both engines.
import pg from 'pg'
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres'
import { sql } from 'drizzle-orm'
import type { PostgresDatabase } from './connection.js'
import { sqlState } from './connection.js'

// As context.ts defines it (not imported from there: context.ts imports this module's types).
type Transaction = Parameters<Parameters<PostgresDatabase['transaction']>[0]>[0]

/**
 * A unit of work in a group: it runs in the shared transaction, on the group's connection (`client`;
 * null when group commit is off and the work has a transaction of its own).
 */
export type GroupWork<T> = (tx: Transaction, client: pg.PoolClient | null) => Promise<T>

export interface GroupWorkOptions {
  /**
   * The work sets the transaction's lock_timeout itself before it waits for any lock (set_config(...,
   * true)). A work that does not runs with the session's own lock_timeout: the runner puts it back
   * when an earlier work of the group changed it.
   */
  ownLockTimeout: boolean
  /** The work is one statement: alone in its group, it runs without BEGIN and COMMIT (its implicit transaction). */
  oneStatement?: boolean
  /**
   * When the change gives up (epoch ms): a work still waiting for its group then is refused with
   * SQLSTATE 55P03 (lock_not_available), as a lock wait that ran out. A work without one waits for
   * its turn however long the group before it takes (a lock it waits for without a timeout holds the lane).
   */
  deadline?: number | null
}

export interface PostgresGroupCommit {
  /**
   * Runs `work` in the next shared transaction; resolves after the commit. Semantics:
   * - the works of a group run one after another, each seeing the writes of those before it;
   * - a work that throws answers its own error and none of its writes is kept: the group rolls back
   *   and runs again without it (so a work must be safe to run twice; its first writes are undone);
   * - the locks a work takes (the transition lock, the row locks) are held until its group commits;
   * - a failed commit (a lost connection, the server's restart) fails every work of the group, and
   *   nothing of the group is stored;
   * - a work that lost a deadlock against another group runs again in the next group, once.
   */
  run<T>(work: GroupWork<T>, options: GroupWorkOptions): Promise<T>
}

interface Waiting {
  work: GroupWork<unknown>
  options: GroupWorkOptions
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
  retried: boolean
}

/** deadlock_detected: the server chose this transaction to break a wait cycle with another one. */
const DEADLOCK_DETECTED = '40P01'
/** lock_not_available: what a change that waited past its deadline answers (the stores translate it). */
const LOCK_NOT_AVAILABLE = '55P03'

/** A work's failure, carried out of the attempt's transaction so Drizzle rolls it back. */
class WorkFailed extends Error {
  constructor(
    readonly index: number,
    readonly failure: unknown,
  ) {
    super('a work of the group failed')
  }
}

export interface GroupCommitSettings {
  /** Groups in flight at once, each on a pool connection of its own. */
  lanes: number
  /** The most works in one group (a longer group holds its first work's locks longer). */
  maxGroup: number
}

/**
 * One lane: the changes of one instance commit one group at a time, while the pool's other connections
 * serve the reads. Two lanes measured slower (bench, 29 November: status changes 0.15 against 0.24 of
 * the replay): every change moves the kept totals' rows (shipments_status_counts), so a second group
 * waited for the first's commit on them, or deadlocked with it when two groups took them in opposite
 * orders (the server breaks the cycle after deadlock_timeout, a second).
 */
export const DEFAULT_GROUP_COMMIT: GroupCommitSettings = { lanes: 1, maxGroup: 32 }

export function createPostgresGroupCommit(db: PostgresDatabase, settings: GroupCommitSettings = DEFAULT_GROUP_COMMIT): PostgresGroupCommit {
  let waiting: Waiting[] = []
  let running = 0
  // One Drizzle handle per pooled connection, made on its first group.
  const handles = new WeakMap<pg.PoolClient, NodePgDatabase>()
  const handleOf = (client: pg.PoolClient) => {
    let handle = handles.get(client)
    if (!handle) handles.set(client, (handle = drizzle({ client })))
    return handle
  }
  // Each connection's own lock_timeout (the server's, the role's, or what the host set on it), read on
  // its first group: what a work that sets none runs with, after one that set its own.
  const sessionLockTimeouts = new WeakMap<pg.PoolClient, string>()

  function pump() {
    // A change whose deadline passed while it waited for its group answers as a lock wait that ran out.
    const now = Date.now()
    waiting = waiting.filter((entry) => {
      if (entry.options.deadline == null || entry.options.deadline > now) return true
      entry.reject(Object.assign(new Error('the lock_timeout ran out while the change waited for its group'), { code: LOCK_NOT_AVAILABLE }))
      return false
    })
    while (running < settings.lanes && waiting.length > 0) {
      const group = waiting.slice(0, settings.maxGroup)
      waiting = waiting.slice(group.length)
      running++
      const retries: Waiting[] = []
      void runGroup(group, retries).finally(() => {
        running--
        // Works that lost a deadlock run in the next group, once this one ended either way.
        waiting.push(...retries)
        pump()
      })
    }
  }

  async function runGroup(group: Waiting[], retries: Waiting[]) {
    let client: pg.PoolClient
    try {
      client = await db.$client.connect()
    } catch (error) {
      for (const entry of group) entry.reject(error)
      return
    }
    let broken: Error | undefined
    const open = new Set(group)
    try {
      await commitGroup(client, group, open, retries)
    } catch (error) {
      // The commit (or a rollback) failed: nothing of the group is stored, every work still in it answers the error.
      broken = error instanceof Error ? error : new Error(String(error))
      for (const entry of open) entry.reject(error)
    } finally {
      // A connection that failed mid-group is dropped, not handed to the next request.
      client.release(broken)
    }
  }

  /** A work that failed leaves the group: to the next group after a deadlock (once), else with its error. */
  function leave(entry: Waiting, failure: unknown, open: Set<Waiting>, retries: Waiting[]) {
    open.delete(entry)
    if (sqlState(failure) === DEADLOCK_DETECTED && !entry.retried) {
      entry.retried = true
      retries.push(entry)
    } else entry.reject(failure)
  }

  async function commitGroup(client: pg.PoolClient, group: Waiting[], open: Set<Waiting>, retries: Waiting[]) {
    if (group.length === 1 && group[0].options.oneStatement) {
      // Drizzle's handle stands in for the transaction: the one statement commits by itself.
      const [entry] = group
      try {
        entry.resolve(await entry.work(handleOf(client) as unknown as Transaction, client))
        open.delete(entry)
      } catch (error) {
        leave(entry, error, open, retries)
      }
      return
    }
    if (!sessionLockTimeouts.has(client)) {
      const { rows } = await client.query<{ value: string }>("SELECT current_setting('lock_timeout') AS value")
      sessionLockTimeouts.set(client, rows[0].value)
    }
    const sessionLockTimeout = sessionLockTimeouts.get(client)!
    let pending = group
    while (pending.length > 0) {
      try {
        const results = await handleOf(client).transaction(async (tx) => runInTurn(tx as Transaction, client, pending, sessionLockTimeout))
        pending.forEach((entry, index) => entry.resolve(results[index]))
        for (const entry of pending) open.delete(entry)
        return
      } catch (error) {
        if (!(error instanceof WorkFailed)) throw error
        // The works before it ran and will again; the one that failed leaves.
        const failed = pending[error.index]!
        pending = pending.filter((_, index) => index !== error.index)
        leave(failed, error.failure, open, retries)
      }
    }
  }

  async function runInTurn(tx: Transaction, client: pg.PoolClient, pending: Waiting[], sessionLockTimeout: string) {
    const results: unknown[] = []
    let lockTimeoutChanged = false
    for (let index = 0; index < pending.length; index++) {
      const { work, options } = pending[index]
      if (lockTimeoutChanged && !options.ownLockTimeout) {
        await tx.execute(sql`SELECT set_config('lock_timeout', ${sessionLockTimeout}, true)`)
        lockTimeoutChanged = false
      }
      try {
        results.push(await work(tx, client))
      } catch (failure) {
        throw new WorkFailed(index, failure)
      }
      if (options.ownLockTimeout) lockTimeoutChanged = true
    }
    return results
  }

  return {
    run<T>(work: GroupWork<T>, options: GroupWorkOptions) {
      return new Promise<T>((resolve, reject) => {
        waiting.push({ work: work as GroupWork<unknown>, options, resolve: resolve as (value: unknown) => void, reject, retried: false })
        pump()
      })
    },
  }
}
