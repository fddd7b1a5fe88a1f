// Inserts and updates prepared once per set of columns they write. Drizzle builds a query's SQL anew on
// every call, and on a label purchase's path building cost more than running the statements (a quarter
// of the process's time); a table is written in a few shapes only, so each map stays small.
import { eq, sql, type Column } from 'drizzle-orm'
import type { SQLiteTable } from 'drizzle-orm/sqlite-core'
import type { SqliteDatabase } from './dialect.js'

/** Enough for every shape the package writes; past it the map starts again (never unbounded). */
const SHAPES_PER_TABLE = 64

type Prepared = { run(values: Record<string, unknown>): { changes: number }; get(values: Record<string, unknown>): unknown; all(values: Record<string, unknown>): unknown[] }

/** The columns given a value (undefined leaves a column to its default, as Drizzle does), sorted; null ones marked. */
function shapeOf(values: Record<string, unknown>): string[] {
  return Object.keys(values)
    .filter((key) => values[key] !== undefined)
    .sort()
    .map((key) => (values[key] === null ? `${key}${NULL_MARK}` : key))
}
const NULL_MARK = '=null'

/**
 * A column's placeholder, or SQL NULL for a column set to null: Drizzle encodes a placeholder's value
 * without its null check (a JSON column would store the text "null", a time column throw).
 */
function valueOf(shaped: string): [string, unknown] {
  return shaped.endsWith(NULL_MARK) ? [shaped.slice(0, -NULL_MARK.length), sql`NULL`] : [shaped, sql.placeholder(shaped)]
}

function cached(statements: Map<string, Prepared>, key: string, prepare: () => Prepared): Prepared {
  let statement = statements.get(key)
  if (!statement) {
    if (statements.size >= SHAPES_PER_TABLE) statements.clear()
    statement = prepare()
    statements.set(key, statement)
  }
  return statement
}

/** `insert(values)` runs the insert, `insertReturning(values)` gives the row written. */
export function shapedInsert<TTable extends SQLiteTable>(db: SqliteDatabase, table: TTable) {
  const statements = new Map<string, Prepared>()
  const statementFor = (columns: string[], returning: boolean) =>
    cached(statements, `${returning}:${columns.join(',')}`, () => {
      const query = db.insert(table).values(Object.fromEntries(columns.map(valueOf)) as TTable['$inferInsert'])
      return (returning ? query.returning().prepare() : query.prepare()) as unknown as Prepared
    })
  return {
    insert(values: TTable['$inferInsert']): number {
      const row = values as Record<string, unknown>
      return statementFor(shapeOf(row), false).run(row).changes
    },
    insertReturning(values: TTable['$inferInsert']): TTable['$inferSelect'] {
      const row = values as Record<string, unknown>
      return statementFor(shapeOf(row), true).get(row) as TTable['$inferSelect']
    },
  }
}

/** Updates of the row whose `key` column has a value; `update` counts the rows changed, `updateReturning` gives the row. */
export function shapedUpdate<TTable extends SQLiteTable>(db: SqliteDatabase, table: TTable, key: Column) {
  const statements = new Map<string, Prepared>()
  // A name no column has: the key's value is bound beside the columns'.
  const KEY = '$key'
  const statementFor = (columns: string[], returning: boolean) =>
    cached(statements, `${returning}:${columns.join(',')}`, () => {
      const query = db
        .update(table)
        .set(Object.fromEntries(columns.map(valueOf)) as never)
        .where(eq(key, sql.placeholder(KEY)))
      return (returning ? query.returning().prepare() : query.prepare()) as unknown as Prepared
    })
  return {
    update(keyValue: string | number, values: Partial<TTable['$inferInsert']>): number {
      const row = values as Record<string, unknown>
      return statementFor(shapeOf(row), false).run({ ...row, [KEY]: keyValue }).changes
    },
    updateReturning(keyValue: string | number, values: Partial<TTable['$inferInsert']>): TTable['$inferSelect'] | undefined {
      const row = values as Record<string, unknown>
      return statementFor(shapeOf(row), true).get({ ...row, [KEY]: keyValue }) as TTable['$inferSelect'] | undefined
    },
  }
}
