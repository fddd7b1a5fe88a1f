// The indexed form of a tracking number, in SQL: what trackingNumberKey (src/text.ts) computes, written
// the same on both engines, so the schema's expression index and the queries' condition are one text.
import { sql, type AnyColumn, type SQL } from 'drizzle-orm'

export const trackingNumberKeyOf = (column: AnyColumn | SQL) => sql`upper(replace(replace(${column}, ' ', ''), '-', ''))`
