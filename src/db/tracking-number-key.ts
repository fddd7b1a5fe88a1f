// The indexed form of a tracking number, in SQL: what trackingNumberKey (src/text.ts) computes, written
// the same on both engines, so the schema's expression index and the queries' condition are one text.
import { sql, type AnyColumn, type SQL } from 'drizzle-orm'

export const trackingNumberKeyOf = (column: AnyColumn | SQL) => sql`upper(replace(replace(${column}, ' ', ''), '-', ''))`

/**
 * A reference search matches the start of the reference, ASCII letters in either case (SQLite's
 * upper() folds only those; PostgreSQL's translate() is told to do the same), so an index of this
 * expression answers it with a range, at any store size. `referenceSearchBounds` gives the range.
 */
export const referenceSearchKeyOf = {
  sqlite: (column: AnyColumn | SQL) => sql`upper(${column})`,
  // Byte order (COLLATE "C"), as SQLite compares: the range's upper bound then holds in any database locale.
  postgres: (column: AnyColumn | SQL) => sql`(translate(${column}, 'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ') COLLATE "C")`,
}

/** The key range of references that start with `text`: [text, text + the last code point). */
export function referenceSearchBounds(text: string): [string, string] {
  const key = text.replace(/[a-z]+/g, (letters) => letters.toUpperCase())
  return [key, `${key}\u{10FFFF}`]
}
