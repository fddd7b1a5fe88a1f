// A fixed-window request counter per key, in the process's memory: no store, no extra infrastructure.
// Bounded: past `maxKeys` the windows that ended are dropped; a window still running is never dropped
// (forgetting it would give its key a fresh allowance), so when every kept window is live a new key is
// refused until one ends. A flood of new keys thus costs memory no more than the bound and never frees a
// key that is at its limit.
import { isIPv6 } from 'node:net'

export interface RateLimiter {
  /**
   * Counts one request for every key; false (and nothing counted) when any of them is at its limit, or is
   * new while every kept window is live.
   */
  take(keys: readonly string[]): boolean
  /** Seconds until the first of these keys' windows ends, or the oldest kept window when a key found no room (for Retry-After). */
  retryAfterSeconds(keys: readonly string[]): number
}

export function createRateLimiter(options: { max: number; windowMs: number; clock: () => number; maxKeys?: number }): RateLimiter {
  // Insertion order is the order windows end in (every window lasts windowMs, and a key that starts a new
  // one is moved to the end): the ended ones are always at the front.
  const windows = new Map<string, { count: number; resetAt: number }>()
  const maxKeys = options.maxKeys ?? 10_000

  const current = (key: string, now: number) => {
    const found = windows.get(key)
    return found && found.resetAt > now ? found : null
  }

  /** Drops the windows that ended; whether `wanted` new windows fit beside the live ones. */
  function makeRoom(now: number, wanted: number): boolean {
    if (windows.size + wanted <= maxKeys) return true
    for (const [key, window] of windows) {
      if (window.resetAt > now) break
      windows.delete(key)
    }
    return windows.size + wanted <= maxKeys
  }

  return {
    take(keys) {
      const now = options.clock()
      if (keys.some((key) => (current(key, now)?.count ?? 0) >= options.max)) return false
      const fresh = keys.filter((key) => !current(key, now))
      if (fresh.length > 0 && !makeRoom(now, new Set(fresh).size)) return false
      for (const key of keys) {
        const window = current(key, now)
        if (window) window.count += 1
        else {
          windows.delete(key)
          windows.set(key, { count: 1, resetAt: now + options.windowMs })
        }
      }
      return true
    },
    retryAfterSeconds(keys) {
      const now = options.clock()
      const oldest = windows.values().next().value?.resetAt ?? now
      const ends = keys.map((key) => current(key, now)?.resetAt ?? oldest)
      return Math.max(1, Math.ceil((Math.max(...ends) - now) / 1000))
    },
  }
}

/**
 * The key of a client address: IPv4 as it is, IPv6 by its /64 (one subscriber's network: a host given
 * a /64 can take a new address per request). An IPv4-mapped IPv6 address is its IPv4 address.
 */
export function clientAddressKey(address: string): string {
  if (!isIPv6(address)) return address
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)
  if (mapped) return mapped[1]!
  // The URL parser writes an IPv6 address one way (lower case, hexadecimal only, `::` for zeros).
  const canonical = new URL(`http://[${address.split('%')[0]}]`).hostname.slice(1, -1)
  const [head = '', tail] = canonical.split('::')
  const headGroups = head === '' ? [] : head.split(':')
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill('0'), ...tailGroups]
  return `${groups.slice(0, 4).join(':')}::/64`
}
