// ShipStation's activity log on SQLite: one autocommit insert per request, pruned now and then by id.
import { and, desc, eq, lte, sql } from 'drizzle-orm'
import type { ExchangeActivityStore } from '../data-layer.js'
import type { SqliteContext } from './context.js'
import { leaveUncounted } from './dialect.js'
import { exchangeActivity } from './schema.js'

/** The activity log's refused rows (status 400 and above), or its answered ones: each kept against its own bound. */
const exchangeActivityOutcome = (refused: boolean) =>
  refused ? sql`${exchangeActivity.statusCode} >= 400` : sql`${exchangeActivity.statusCode} < 400`

export function createSqliteExchangeActivityStore({ db }: SqliteContext): ExchangeActivityStore {
  return {
    async recordExchangeActivity(entry, { keep, keepRefused, every }) {
      // One autocommit insert; now and then a prune by id, answered and refused rows each against their
      // own bound (anyone can send refused requests: they must not evict the answered ones).
      const { id } = db.insert(exchangeActivity).values(entry).returning({ id: exchangeActivity.id }).get()!
      let pruned = 0
      if (id % every === 0) {
        for (const [rows, kept] of [[exchangeActivityOutcome(false), keep], [exchangeActivityOutcome(true), keepRefused]] as const) {
          const newestDropped = db.select({ id: exchangeActivity.id }).from(exchangeActivity).where(rows).orderBy(desc(exchangeActivity.id)).limit(1).offset(kept).get()
          if (newestDropped) pruned += db.delete(exchangeActivity).where(and(rows, lte(exchangeActivity.id, newestDropped.id))).run().changes
        }
      }
      // A log of requests: no cached result depends on it (a ShipStation request must not empty the export's caches).
      leaveUncounted(db, 1 + pruned)
    },

    async exchangeActivity(limit, refused) {
      const rows = refused === undefined ? undefined : exchangeActivityOutcome(refused)
      return db.select().from(exchangeActivity).where(rows).orderBy(desc(exchangeActivity.id)).limit(limit).all()
    },

    async newestExchangeActivity(action) {
      return db.select().from(exchangeActivity).where(eq(exchangeActivity.action, action)).orderBy(desc(exchangeActivity.id)).limit(1).get()
    },
  }
}
