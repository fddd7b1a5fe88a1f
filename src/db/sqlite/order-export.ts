// SQLite queries of the reference order store's export: the count and a page's first key, both read
// from an index of the orders alone (the exportable ones, or all completed ones), then one page of
// orders with their addresses, and their line items. Prepared statements per query shape, whatever the page size.
import type { Statement } from 'better-sqlite3'
import { createChangeStamp, type SqliteDatabase } from './dialect.js'
import { EXPORT_FROM, ITEM_COLUMNS, PAGE_COLUMN, PAGE_SELECT, PROBLEM_COLUMN, toExportOrders } from '../export-query.js'
import type { ExportOrdersPage, ExportOrdersQuery } from '../../order-store.js'

interface Statements {
  /** The number of matching orders. */
  count: Statement
  /** The (dateUpdated, id) key of the matching order at an offset. */
  start: Statement
  /** The same, counted from the last matching order: the index is walked from whichever end is nearer. */
  startFromEnd: Statement
  /** Rows as arrays (cheaper than objects for hundreds of rows). */
  page: Statement
}

/** What one state of the database says about one query: the total, and the first key of each page asked for (at most one per page). */
interface Boundaries {
  total: number
  starts: Map<number, [number, number] | undefined>
}

const MAX_CACHED_QUERIES = 32

export function createOrderExportQueries(db: SqliteDatabase) {
  const client = db.$client
  const statements = new Map<string, Statements>()
  // Items of a page in one statement, whatever the page size: the ids travel as one JSON array.
  const items = client
    .prepare(`SELECT ${ITEM_COLUMNS} FROM shipments_order_line_items WHERE order_id IN (SELECT value FROM json_each(?)) ORDER BY order_id, id`)
    .raw()
  // Cached counts and page starts are reused only while nothing at all has been written to the database.
  const changeStamp = createChangeStamp(db)
  const boundaryCache = new Map<string, { stamp: string; boundaries: Boundaries }>()

  function statementsFor(query: ExportOrdersQuery): Statements {
    const key = `${query.window ? 'w' : ''}${query.store ? 's' : ''}${query.includeInvalid ? 'i' : ''}`
    let prepared = statements.get(key)
    if (prepared) return prepared
    // Written as the partial index of the exportable orders states it, and named, so SQLite uses it
    // whatever its statistics say (without them it would pick the index of all completed orders).
    const conditions = query.includeInvalid ? ['o.is_completed = 1'] : [`o.is_completed = 1 AND ${PROBLEM_COLUMN} IS NULL`]
    const orders = query.includeInvalid ? 'shipments_orders o' : 'shipments_orders o INDEXED BY shipments_orders_exportable_idx'
    if (query.window) conditions.push('o.date_updated < @before')
    if (query.store) conditions.push('json_extract(o.fields, @storePath) = @store')
    const where = conditions.join(' AND ')
    // A page starts at its start key, which already lies inside the window: repeating the lower bound
    // there would make SQLite seek to the window's start instead of the page's.
    const windowWhere = query.window ? `${where} AND o.date_updated >= @after` : where
    prepared = {
      count: client.prepare(`SELECT count(*) FROM ${orders} WHERE ${windowWhere}`).pluck(),
      start: client.prepare(`SELECT o.date_updated, o.id FROM ${orders} WHERE ${windowWhere} ORDER BY o.date_updated, o.id LIMIT 1 OFFSET @offset`).raw(),
      startFromEnd: client
        .prepare(`SELECT o.date_updated, o.id FROM ${orders} WHERE ${windowWhere} ORDER BY o.date_updated DESC, o.id DESC LIMIT 1 OFFSET @offset`)
        .raw(),
      page: client
        .prepare(
          `SELECT ${PAGE_SELECT}
             FROM ${EXPORT_FROM.replace('shipments_orders o', orders)}
            WHERE ${where} AND (o.date_updated, o.id) >= (@startUpdated, @startId)
            ORDER BY o.date_updated, o.id
            LIMIT @pageSize`,
        )
        .raw(),
    }
    statements.set(key, prepared)
    return prepared
  }

  function parameters(query: ExportOrdersQuery) {
    return {
      ...(query.window && { before: query.window.before }),
      ...(query.store && { storePath: '$.' + JSON.stringify(query.store.fieldHandle), store: query.store.value }),
    }
  }

  /** The total and the first key of the page, from the cache while the database is unchanged. */
  function boundariesFor(query: ExportOrdersQuery, prepared: Statements): { total: number; start: [number, number] | undefined } {
    const stamp = changeStamp()
    const key = JSON.stringify([query.window, query.store, query.includeInvalid])
    let cached = boundaryCache.get(key)
    // The window is exclusive and compared at whole seconds: after 12:00:00 means from 12:00:01.
    const values = { ...parameters(query), ...(query.window && { after: query.window.after + 1000 }) }
    if (!cached || cached.stamp !== stamp) {
      cached = { stamp, boundaries: { total: prepared.count.get(values) as number, starts: new Map() } }
      // Inside a host's open transaction the rows may yet be rolled back, which changes no stamp.
      if (!client.inTransaction) {
        boundaryCache.delete(key)
        if (boundaryCache.size >= MAX_CACHED_QUERIES) boundaryCache.delete(boundaryCache.keys().next().value!)
        boundaryCache.set(key, cached)
      }
    }
    const { total, starts } = cached.boundaries
    const offset = (query.page - 1) * query.pageSize
    if (offset >= total) return { total, start: undefined }
    if (!starts.has(offset)) {
      // Walking from the nearer end makes the last page cost what the first does.
      const start = offset <= total / 2 ? prepared.start.get({ ...values, offset }) : prepared.startFromEnd.get({ ...values, offset: total - 1 - offset })
      starts.set(offset, start as [number, number] | undefined)
    }
    return { total, start: starts.get(offset) }
  }

  return function exportOrders(query: ExportOrdersQuery): ExportOrdersPage {
    const prepared = statementsFor(query)
    const { total, start } = boundariesFor(query, prepared)
    if (!start) return { orders: [], total }
    const rows = prepared.page.all({ ...parameters(query), pageSize: query.pageSize, startUpdated: start[0], startId: start[1] }) as unknown[][]
    const itemRows = items.all(JSON.stringify(rows.map((row) => row[PAGE_COLUMN.id]))) as unknown[][]
    return { orders: toExportOrders(rows, itemRows), total }
  }
}
