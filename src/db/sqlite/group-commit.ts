// Write transactions that come together share one commit: what the requests of one turn of the event loop
// submit runs in a single IMMEDIATE transaction, each in a savepoint of its own, and commits once.
import { isBusy, writeTransactionWaiting, type SqliteDatabase } from './dialect.js'

interface Work {
  task: () => unknown
  /** When waiting for another process's write lock must give up (epoch ms); null: the connection's busy timeout. */
  deadline: number | null
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

export interface GroupCommit {
  /**
   * Runs `task` (synchronous) in the next shared write transaction; it sees the writes of the tasks
   * before it and is rolled back alone if it throws (the others then run again, so a task must be
   * safe to run twice: its writes the first time are rolled back). Resolves after the commit. With `deadline`,
   * SQLITE_BUSY (see isBusy) when another process held the file's write lock until then.
   */
  run<T>(task: () => T, deadline?: number | null): Promise<T>
  /** Runs what is waiting now (before the connection closes). */
  flush(): void
}

/**
 * Each commit writes every page its transaction changed to the WAL, and locks and unlocks the file:
 * for a status change (the row, its history row, its outbox event and their indexes) that was a third
 * of its time. Transactions committed together write the pages they share (the tails of the history
 * and the outbox, their indexes) once.
 */
export function createGroupCommit(db: SqliteDatabase, busyTimeoutMs: number): GroupCommit {
  let waiting: Work[] = []
  let scheduled = false
  // Called inside the shared transaction, a better-sqlite3 transaction function is a savepoint.
  const inSavepoint = db.$client.transaction((task: () => unknown) => task())

  function flush() {
    scheduled = false
    if (waiting.length === 0) return
    const works = waiting
    waiting = []
    // Another process's write lock is waited for until the nearest deadline (the busy timeout for a
    // task without one).
    const now = Date.now()
    const deadlineOf = (work: Work) => work.deadline ?? now + busyTimeoutMs
    const deadlineAfter = (group: Work[]) => Math.min(...group.map(deadlineOf))
    const waitMs = deadlineAfter(works) - now
    let results: Array<{ value: unknown } | { error: unknown }> = []
    try {
      try {
        // Optimistically without savepoints (two statements a task): a task that throws rolls the
        // whole group back, which then runs again with a savepoint for each task.
        writeTransactionWaiting(db, waitMs, busyTimeoutMs, () => {
          for (const work of works) results.push({ value: work.task() })
        })
      } catch (error) {
        if (results.length === works.length || (isBusy(error) && results.length === 0)) throw error
        results = []
        writeTransactionWaiting(db, deadlineAfter(works) - Date.now(), busyTimeoutMs, () => {
          for (const work of works) {
            try {
              results.push({ value: inSavepoint(work.task) })
            } catch (error) {
              // A failure SQLite answers by rolling the whole transaction back ends the group (below).
              if (!db.$client.inTransaction) throw error
              results.push({ error })
            }
          }
        })
      }
    } catch (error) {
      if (isBusy(error) && results.length === 0) {
        // The write lock was not had: who can still wait tries again at the next turn.
        for (const work of works) {
          if (deadlineOf(work) <= Date.now()) work.reject(error)
          else waiting.push(work)
        }
        if (waiting.length > 0) schedule()
        return
      }
      for (const work of works) work.reject(error)
      return
    }
    works.forEach((work, index) => {
      const result = results[index]
      if ('error' in result) work.reject(result.error)
      else work.resolve(result.value)
    })
  }

  function schedule() {
    if (scheduled) return
    scheduled = true
    setImmediate(flush)
  }

  return {
    run<T>(task: () => T, deadline: number | null = null) {
      return new Promise<T>((resolve, reject) => {
        waiting.push({ task, deadline, resolve: resolve as (value: unknown) => void, reject })
        schedule()
      })
    },
    flush,
  }
}
