// Named mutexes: an in-process FIFO queue per name, optionally backed by a proper-lockfile lock in a
// directory, so processes sharing one SQLite file serialize too.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import lockfile from 'proper-lockfile'
import { LockTimeoutError } from './data-layer.js'

export interface MutexOptions {
  /** Directory for the cross-process lock files; null keeps the locks inside this process. */
  directory: string | null
  /** A lock whose holder stopped refreshing it this long ago (a killed process) is taken over. */
  staleMs?: number
  /** Called when a held file lock was lost (for example, taken over after a long event-loop stall). */
  onCompromised?: (lockName: string, error: Error) => void
}

export interface Mutex {
  /** Runs `task` while holding `name`; waits at most `timeoutMs` for it, then throws LockTimeoutError. */
  withLock<T>(name: string, timeoutMs: number, task: () => Promise<T> | T): Promise<T>
}

export function createMutex(options: MutexOptions): Mutex {
  const queueTails = new Map<string, Promise<void>>()
  const staleMs = options.staleMs ?? 5000
  if (options.directory) mkdirSync(options.directory, { recursive: true })

  async function acquireInProcess(name: string, deadline: number): Promise<() => void> {
    const holder = queueTails.get(name)
    let release!: () => void
    const current = new Promise<void>((resolve) => (release = resolve))
    const tail = holder ? holder.then(() => current) : current
    queueTails.set(name, tail)
    // The last holder out removes the entry, so the map does not grow with every shipment ever locked.
    void tail.then(() => {
      if (queueTails.get(name) === tail) queueTails.delete(name)
    })
    // Nobody holds it: no timer, no race (the common case, on every transition).
    if (!holder) return release
    const previous = holder

    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - Date.now()))
    })
    const outcome = await Promise.race([previous.then(() => 'acquired' as const), timedOut])
    clearTimeout(timer)
    if (outcome === 'timeout') {
      // Give our place up only once the holders before us are done, so the queue stays in order.
      void previous.then(release)
      throw new LockTimeoutError(name)
    }
    return release
  }

  async function acquireFileLock(name: string, deadline: number): Promise<() => Promise<void>> {
    const lockPath = join(options.directory!, `${name.replace(/[^A-Za-z0-9_-]+/g, '_')}.lock`)
    for (let attempt = 0; ; attempt++) {
      try {
        return await lockfile.lock(lockPath, {
          realpath: false,
          lockfilePath: lockPath,
          stale: staleMs,
          retries: 0,
          onCompromised: (error) => options.onCompromised?.(name, error),
        })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error
        if (Date.now() >= deadline) throw new LockTimeoutError(name)
        // Back off a little more each time, with jitter so competing processes do not march in step.
        await sleep(Math.min(2 + attempt * 2, 25) * (0.5 + Math.random()))
      }
    }
  }

  return {
    async withLock(name, timeoutMs, task) {
      const deadline = Date.now() + timeoutMs
      const releaseInProcess = await acquireInProcess(name, deadline)
      try {
        if (!options.directory) return await task()
        const releaseFileLock = await acquireFileLock(name, deadline)
        try {
          return await task()
        } finally {
          await releaseFileLock().catch((error: Error) => options.onCompromised?.(name, error))
        }
      } finally {
        releaseInProcess()
      }
    },
  }
}
