// A list of rows read at most once per `maxAgeMs`, and again at once after `invalidate()`: the follow-ups
// of every delivered event consult the webhook subscriptions and the pushing integrations, which change
// rarely, so a batch of events must not cost two queries.

export interface CachedRows<Row> {
  get(): Promise<Row[]>
  /** Drops the cached rows (this instance changed them); another instance's change is seen within maxAgeMs. */
  invalidate(): void
}

export function cachedRows<Row>(load: () => Promise<Row[]>, maxAgeMs: number): CachedRows<Row> {
  let cached: { rows: Promise<Row[]>; at: number } | null = null
  return {
    get() {
      const now = performance.now()
      if (!cached || now - cached.at >= maxAgeMs) {
        const rows = load()
        cached = { rows, at: now }
        // A failed read is not kept: the next call reads again.
        rows.catch(() => {
          if (cached?.rows === rows) cached = null
        })
      }
      return cached.rows
    },
    invalidate() {
      cached = null
    },
  }
}

/** How long a follow-up may use subscriptions or integrations changed by another instance. */
export const FOLLOW_UP_ROWS_MAX_AGE_MS = 1000
