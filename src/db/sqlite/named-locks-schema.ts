// The SQLite-only table of named locks (see named-locks.ts): not part of the exported schema, which
// is the same on both engines; PostgreSQL's named locks are advisory locks.
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * Named locks held across asynchronous work (a label purchase, a push): one row per lock held, taken
 * and released in the file's own write transactions (see named-locks.ts). A holder renews its lease;
 * a row whose lease ran out belongs to a process that died or stalled, and the next taker replaces it.
 */
export const namedLocks = sqliteTable('shipments_named_locks', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  /** Epoch ms; the row is anyone's to take after it. */
  leaseUntil: integer('lease_until').notNull(),
})
