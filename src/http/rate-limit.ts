// A fixed-window request counter per key, in the process's memory: no store, no extra infrastructure.
// Bounded: past `maxKeys` the windows that ended are dropped, then the oldest, so a flood of keys costs
// memory no more than the bound.

export interface RateLimiter {
  /** Counts one request for every key; false (and nothing counted) when any of them is at its limit. */
  take(keys: readonly string[]): boolean
  /** Seconds until the first of these keys' windows ends (for Retry-After). */
  retryAfterSeconds(keys: readonly string[]): number
}

export function createRateLimiter(options: { max: number; windowMs: number; clock: () => number; maxKeys?: number }): RateLimiter {
  const windows = new Map<string, { count: number; resetAt: number }>()
  const maxKeys = options.maxKeys ?? 10_000

  const current = (key: string, now: number) => {
    const found = windows.get(key)
    return found && found.resetAt > now ? found : null
  }

  function makeRoom(now: number) {
    if (windows.size < maxKeys) return
    for (const [key, window] of windows) if (window.resetAt <= now) windows.delete(key)
    // Insertion order is age order: the oldest windows go first.
    for (const key of windows.keys()) {
      if (windows.size < maxKeys) break
      windows.delete(key)
    }
  }

  return {
    take(keys) {
      const now = options.clock()
      if (keys.some((key) => (current(key, now)?.count ?? 0) >= options.max)) return false
      for (const key of keys) {
        const window = current(key, now)
        if (window) window.count += 1
        else {
          makeRoom(now)
          windows.delete(key)
          windows.set(key, { count: 1, resetAt: now + options.windowMs })
        }
      }
      return true
    },
    retryAfterSeconds(keys) {
      const now = options.clock()
      const ends = keys.map((key) => current(key, now)?.resetAt ?? now)
      return Math.max(1, Math.ceil((Math.max(...ends) - now) / 1000))
    },
  }
}
