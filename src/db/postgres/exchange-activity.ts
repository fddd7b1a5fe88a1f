// ShipStation's activity log on PostgreSQL: one insert per request, pruned now and then by id.
import { and, desc, eq, lte, sql } from 'drizzle-orm'
import type { ExchangeActivityStore } from '../data-layer.js'
import { isStorableText, type PostgresContext } from './context.js'
import { exchangeActivity } from './schema.js'

/** The activity log's refused rows (status 400 and above), or its answered ones: each kept against its own bound. */
const exchangeActivityOutcome = (refused: boolean) =>
  refused ? sql`${exchangeActivity.statusCode} >= 400` : sql`${exchangeActivity.statusCode} < 400`

export function createPostgresExchangeActivityStore({ db }: PostgresContext): ExchangeActivityStore {
  return {
    async recordExchangeActivity(entry, { keep, keepRefused, every }) {
      // Not counted in localWrites: no cache reads this table. Now and then a prune by id, answered and
      // refused rows each against their own bound (anyone can send refused requests: they must not
      // evict the answered ones).
      const [{ id }] = await db.insert(exchangeActivity).values(entry).returning({ id: exchangeActivity.id })
      if (id % every !== 0) return
      for (const [rows, kept] of [[exchangeActivityOutcome(false), keep], [exchangeActivityOutcome(true), keepRefused]] as const) {
        const [newestDropped] = await db.select({ id: exchangeActivity.id }).from(exchangeActivity).where(rows).orderBy(desc(exchangeActivity.id)).limit(1).offset(kept)
        if (newestDropped) await db.delete(exchangeActivity).where(and(rows, lte(exchangeActivity.id, newestDropped.id)))
      }
    },

    async exchangeActivity(limit, refused) {
      const rows = refused === undefined ? undefined : exchangeActivityOutcome(refused)
      return db.select().from(exchangeActivity).where(rows).orderBy(desc(exchangeActivity.id)).limit(limit)
    },

    async newestExchangeActivity(action) {
      if (!isStorableText(action)) return undefined
      const [row] = await db.select().from(exchangeActivity).where(eq(exchangeActivity.action, action)).orderBy(desc(exchangeActivity.id)).limit(1)
      return row
    },
  }
}
