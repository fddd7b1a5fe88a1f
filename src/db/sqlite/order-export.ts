// SQLite queries of the reference order store's export: page boundaries, one page of orders with
// their addresses, and their line items. Three prepared statements per query shape, whatever the page size.
import type { Statement } from 'better-sqlite3'
import { createChangeStamp, type SqliteDatabase } from './dialect.js'
import { EXPORT_FROM, ITEM_COLUMNS, PAGE_COLUMN, pageSelect, problemExpression, toExportOrders } from '../export-query.js'
import type { ExportOrdersPage, ExportOrdersQuery } from '../../orders/order-store.js'

const PROBLEM = problemExpression((column) => `coalesce(trim(${column}) GLOB '[A-Za-z][A-Za-z]', 0)`)

interface Statements {
  /** Every pageSize-th key (dateUpdated, id) of the matching orders, with their total. */
  boundaries: Statement
  /** Rows as arrays (cheaper than objects for hundreds of rows). */
  page: Statement
}

interface Boundaries {
  total: number
  /** The first (dateUpdated, id) of each page. */
  starts: Array<[number, number]>
}

const MAX_CACHED_QUERIES = 32

export function createOrderExportQueries(db: SqliteDatabase) {
  const client = db.$client
  const statements = new Map<string, Statements>()
  // Items of a page in one statement, whatever the page size: the ids travel as one JSON array.
  const items = client
    .prepare(`SELECT ${ITEM_COLUMNS} FROM shipments_order_line_items WHERE order_id IN (SELECT value FROM json_each(?)) ORDER BY order_id, id`)
    .raw()
  // Cached boundaries are reused only while nothing at all has been written to the database.
  const changeStamp = createChangeStamp(db)
  const boundaryCache = new Map<string, { stamp: string; boundaries: Boundaries }>()

  function statementsFor(query: ExportOrdersQuery): Statements {
    const key = `${query.window ? 'w' : ''}${query.store ? 's' : ''}${query.includeInvalid ? 'i' : ''}`
    let prepared = statements.get(key)
    if (prepared) return prepared
    const conditions = ['o.is_completed = 1']
    if (query.window) conditions.push('o.date_updated < @before')
    if (query.store) conditions.push('json_extract(o.fields, @storePath) = @store')
    if (!query.includeInvalid) conditions.push(`(${PROBLEM}) IS NULL`)
    const where = conditions.join(' AND ')
    // A page starts at its boundary key, which already lies inside the window: repeating the lower
    // bound there would make SQLite seek to the window's start instead of the page's.
    const boundaryWhere = query.window ? `${where} AND o.date_updated >= @after` : where
    prepared = {
      // Without invalid orders the filter has already made every problem NULL: not computed twice.
      page: client
        .prepare(
          `SELECT ${pageSelect(query.includeInvalid ? PROBLEM : 'NULL')}
             FROM ${EXPORT_FROM}
            WHERE ${where} AND (o.date_updated, o.id) >= (@startUpdated, @startId)
            ORDER BY o.date_updated, o.id
            LIMIT @pageSize`,
        )
        .raw(),
      boundaries: client.prepare(
        `SELECT date_updated, id, total FROM (
           SELECT o.date_updated, o.id, row_number() OVER (ORDER BY o.date_updated, o.id) AS position, count(*) OVER () AS total
             FROM ${EXPORT_FROM} WHERE ${boundaryWhere}
         ) WHERE (position - 1) % @pageSize = 0`,
      ),
    }
    statements.set(key, prepared)
    return prepared
  }

  function parameters(query: ExportOrdersQuery) {
    return {
      pageSize: query.pageSize,
      ...(query.window && { before: query.window.before }),
      ...(query.store && { storePath: '$.' + JSON.stringify(query.store.fieldHandle), store: query.store.value }),
    }
  }

  function boundariesFor(query: ExportOrdersQuery, prepared: Statements): Boundaries {
    const stamp = changeStamp()
    const key = JSON.stringify([query.window, query.store, query.includeInvalid, query.pageSize])
    const cached = boundaryCache.get(key)
    if (cached && cached.stamp === stamp) return cached.boundaries
    // The window is exclusive and compared at whole seconds: after 12:00:00 means from 12:00:01.
    const after = query.window ? { after: query.window.after + 1000 } : {}
    const rows = prepared.boundaries.all({ ...parameters(query), ...after }) as Array<{ date_updated: number; id: number; total: number }>
    const boundaries: Boundaries = { total: rows[0]?.total ?? 0, starts: rows.map((row) => [row.date_updated, row.id]) }
    // Inside a host's open transaction the rows may yet be rolled back, which changes no stamp.
    if (client.inTransaction) return boundaries
    boundaryCache.delete(key)
    if (boundaryCache.size >= MAX_CACHED_QUERIES) boundaryCache.delete(boundaryCache.keys().next().value!)
    boundaryCache.set(key, { stamp, boundaries })
    return boundaries
  }

  return function exportOrders(query: ExportOrdersQuery): ExportOrdersPage {
    const prepared = statementsFor(query)
    const { total, starts } = boundariesFor(query, prepared)
    const start = starts[query.page - 1]
    if (!start) return { orders: [], total }
    const rows = prepared.page.all({ ...parameters(query), startUpdated: start[0], startId: start[1] }) as unknown[][]
    const itemRows = items.all(JSON.stringify(rows.map((row) => row[PAGE_COLUMN.id]))) as unknown[][]
    return { orders: toExportOrders(rows, itemRows), total }
  }
}
