// Reading the package's timestamptz columns from PostgreSQL's text: every year as itself.
import { getTableColumns, is } from 'drizzle-orm'
import { PgTable, PgTimestamp } from 'drizzle-orm/pg-core'
import { utcInstantOf } from '../../time.js'

/** `0001-01-01 00:00:00+00`, with fractions, an offset of hours, minutes and seconds (local mean time), and ` BC`. */
const POSTGRES_TIMESTAMP = /^(\d{4,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?:([+-])(\d{2})(?::(\d{2}))?(?::(\d{2}))?)?( BC)?$/

/**
 * The instant a timestamp as PostgreSQL writes it (DateStyle ISO) names; no offset means UTC.
 * Anything else (`infinity`, another DateStyle) is read by `new Date`, as Drizzle reads it.
 */
export function parsePostgresTimestamp(text: string): Date {
  const match = POSTGRES_TIMESTAMP.exec(text)
  if (!match) return new Date(text)
  const [, year, month, day, hour, minute, second, fraction = '', sign, offsetHours = '0', offsetMinutes = '0', offsetSeconds = '0', bc] = match
  const wall = { year: bc ? 1 - Number(year) : Number(year), month: Number(month), day: Number(day), hour: Number(hour), minute: Number(minute), second: Number(second) }
  const offsetMs = ((Number(offsetHours) * 60 + Number(offsetMinutes)) * 60 + Number(offsetSeconds)) * 1000
  return new Date(utcInstantOf(wall, Math.floor(Number(`0.${fraction || 0}`) * 1000)) - (sign === '-' ? -offsetMs : offsetMs))
}

/**
 * Makes the timestamp columns of `tables` read with parsePostgresTimestamp.
 *
 * Drizzle's node-postgres driver asks pg for timestamps as text and reads them with `new Date(text)`,
 * which takes years 1 to 99 for two-digit years: `0001-01-01 00:00:00+00` comes back as 2001 and
 * `0050-...` as 1950. A type parser on the pool cannot help (Drizzle passes its own per query, which
 * wins), and changing pg's global type parsers would change the host's queries when the host passed
 * its own database. So the fix sits on the package's own columns only: every query of these tables,
 * by the package or by a host through the exported schema, reads every year as itself, and no other
 * table or pool changes. (The package's raw `pool.query` reads get Dates from pg-types, which reads
 * years 0 to 99 correctly.)
 */
export function readTimestampsExactly(tables: Record<string, unknown>): void {
  for (const table of Object.values(tables)) {
    if (!is(table, PgTable)) continue
    for (const column of Object.values(getTableColumns(table))) {
      if (!is(column, PgTimestamp)) continue
      column.mapFromDriverValue = (value: unknown) => (typeof value === 'string' ? parsePostgresTimestamp(value) : (value as Date))
    }
  }
}
