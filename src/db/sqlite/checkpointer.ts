// Checkpoints of a SQLite file the package opened, in a worker thread of their own instead of inside commits.
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'
import { COMMIT_CHECKPOINT_PAGES, databaseFile, type SqliteDatabase } from './dialect.js'

/**
 * The WAL size (pages) at which a commit checkpoints while the checkpointer runs (COMMIT_CHECKPOINT_PAGES
 * before): only a fallback, for a WAL the checkpointer has not caught up with. Under a steady load of commits the WAL is never wholly copied between two of them, so only a
 * checkpoint of the committing connection lets it start over; one at every 16,000 pages (a WAL of
 * 64 MB) copies little, the checkpointer having copied the rest.
 */
export const FALLBACK_CHECKPOINT_PAGES = 16_000
/** Commits between two checkpoints of the worker: about as many pages as COMMIT_CHECKPOINT_PAGES under load. */
export const COMMITS_PER_CHECKPOINT = 256

// The worker is plain CommonJS evaluated from this string, so that it loads the same way from the
// sources (under a TypeScript loader) and from the build, and loads only the driver.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const db = new Database(workerData.file, { fileMustExist: true })
// A checkpoint never waits: one that finds another process's checkpoint running leaves the pages to it.
db.pragma('busy_timeout = 0')
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close()
    parentPort.close()
    return
  }
  let result
  try {
    result = db.pragma('wal_checkpoint(PASSIVE)')[0]
  } catch (error) {
    // Another process writing its WAL index: the next checkpoint copies these pages too.
    if (!String(error.code).startsWith('SQLITE_BUSY')) throw error
    result = { busy: 1, log: -1, checkpointed: -1 }
  }
  parentPort.postMessage(result)
})
`
const driverPath = () => createRequire(import.meta.url).resolve('better-sqlite3')

/** What one checkpoint of the worker did: SQLite's answer to `PRAGMA wal_checkpoint(PASSIVE)`. */
export interface CheckpointResult {
  /** 1 when another connection's checkpoint held the file. */
  busy: number
  /** Pages in the WAL (-1 when busy before it could tell). */
  log: number
  /** Pages of it copied into the database file (-1 likewise). */
  checkpointed: number
}

export interface Checkpointer {
  /** Called after each commit of the connection: every COMMITS_PER_CHECKPOINT of them, a checkpoint. */
  committed(): void
  /** Resolves when no checkpoint is asked for or running, with the last one's result (null: none yet). */
  settled(): Promise<CheckpointResult | null>
  /** Stops the worker (the connection itself is the caller's to close). */
  close(): Promise<void>
}

/**
 * SQLite checkpoints a WAL database inside the commit that grows the WAL past its threshold: the
 * committing connection copies the pages into the database file and syncs both files, holding the
 * event loop for tens of milliseconds, and under load of status changes this was about a tenth of the
 * host's CPU. Here a worker thread with its own connection copies them (a passive checkpoint, which
 * never blocks a writer) while the event loop goes on. It starts with the first checkpoint asked for,
 * so a host that writes little never starts a thread. A worker that fails leaves checkpoints to the
 * commits again, as SQLite makes them by default, and `onError` hears why.
 *
 * Only for files the package opened: a host's own connection keeps the host's settings. Null for a
 * database in memory or a temporary one.
 */
export function createCheckpointer(
  db: SqliteDatabase,
  options: { commitsPerCheckpoint?: number; onError?: (error: Error) => void } = {},
): Checkpointer | null {
  const file = databaseFile(db)
  if (!file) return null
  const commitsPerCheckpoint = options.commitsPerCheckpoint ?? COMMITS_PER_CHECKPOINT
  let worker: Worker | null = null
  let failed = false
  let closed = false
  let commits = 0
  let running = false
  let lastResult: CheckpointResult | null = null
  let waiters: Array<(result: CheckpointResult | null) => void> = []

  function settle() {
    running = false
    const settledWaiters = waiters
    waiters = []
    for (const resolve of settledWaiters) resolve(lastResult)
  }

  /** The worker is gone for good (it failed, or could not start): commits checkpoint again, as SQLite's default. */
  function fail(error: Error) {
    if (failed) return
    failed = true
    const broken = worker
    worker = null
    void broken?.terminate()
    if (db.$client.open) db.$client.pragma(`wal_autocheckpoint = ${COMMIT_CHECKPOINT_PAGES}`)
    settle()
    options.onError?.(error)
  }

  function start(): Worker {
    const started = new Worker(WORKER_SOURCE, { eval: true, workerData: { driver: driverPath(), file } })
    try {
      db.$client.pragma(`wal_autocheckpoint = ${FALLBACK_CHECKPOINT_PAGES}`)
    } catch (error) {
      void started.terminate()
      throw error
    }
    started.on('message', (result: CheckpointResult) => {
      // Idle, the worker never keeps a process alive (a host that exits without closing loses nothing);
      // a checkpoint that runs is waited for, and so is the exit a close awaits.
      if (!closed) started.unref()
      lastResult = result
      settle()
    })
    started.on('error', fail)
    started.on('exit', (code) => {
      if (!closed) fail(new Error(`The checkpoint worker stopped (exit code ${code})`))
    })
    return started
  }

  let closing: Promise<void> | null = null
  async function stop() {
    closed = true
    const stopping = worker
    worker = null
    if (!stopping) return
    const exited = new Promise<void>((resolve) => stopping.once('exit', () => resolve()))
    // Awaited, the exit keeps the process alive until it comes.
    stopping.ref()
    stopping.postMessage('close')
    await exited
    settle()
  }

  return {
    committed() {
      // Called after a commit: whatever happens here, the commit stands (nothing may throw).
      if (++commits < commitsPerCheckpoint || running || failed || closed) return
      commits = 0
      running = true
      try {
        worker ??= start()
        worker.ref()
        worker.postMessage('checkpoint')
      } catch (error) {
        // A worker that cannot start (a host under Node's permission model without --allow-worker).
        fail(error instanceof Error ? error : new Error(String(error)))
      }
    },

    settled() {
      if (!running) return Promise.resolve(lastResult)
      return new Promise((resolve) => waiters.push(resolve))
    },

    close() {
      closing ??= stop()
      return closing
    },
  }
}
