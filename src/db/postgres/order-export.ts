// PostgreSQL queries of the reference order store's export: the count and a page's first key, both read
// from an index of the orders alone (the exportable ones, or all completed ones), then one page of
// orders with their addresses, and their line items. Named (server-prepared) statements per query shape.
import { createPostgresChangeStamp, type PostgresDatabase } from './connection.js'
import { EXPORT_FROM, ITEM_COLUMNS, PAGE_COLUMN, PAGE_SELECT, PROBLEM_COLUMN, toExportOrders } from '../export-query.js'
import type { ExportOrdersPage, ExportOrdersQuery } from '../../order-store.js'

/** What one state of the database says about one query: the total, and the first key of each page asked for (at most one per page). */
interface Boundaries {
  total: number
  starts: Map<number, [Date, number] | undefined>
}

const MAX_CACHED_QUERIES = 32

export function createPostgresOrderExport(db: PostgresDatabase, localWrites: () => number) {
  const pool = db.$client
  // Export requests are rare: the change sequence is read on every request.
  const changeStamp = createPostgresChangeStamp(db, localWrites, 0)
  const boundaryCache = new Map<string, { stamp: string; boundaries: Boundaries }>()

  /** The filter of a query, its parameters numbered in order; the same shape always gives the same text. */
  function filterOf(query: ExportOrdersQuery, withLowerBound: boolean) {
    const values: unknown[] = []
    const parameter = (value: unknown) => `$${values.push(value)}`
    // Written as the partial index shipments_orders_exportable_idx states it, so the planner uses it.
    const conditions = query.includeInvalid ? ['o.is_completed'] : [`o.is_completed AND ${PROBLEM_COLUMN} IS NULL`]
    if (query.window) conditions.push(`o.date_updated < ${parameter(new Date(query.window.before))}`)
    // The window is exclusive and compared at whole seconds: after 12:00:00 means from 12:00:01.
    if (query.window && withLowerBound) conditions.push(`o.date_updated >= ${parameter(new Date(query.window.after + 1000))}`)
    if (query.store) conditions.push(`o.fields ->> ${parameter(query.store.fieldHandle)} = ${parameter(query.store.value)}`)
    const shape = `${query.window ? 'w' : ''}${query.store ? 's' : ''}${query.includeInvalid ? 'i' : ''}`
    return { where: conditions.join(' AND '), values, parameter, shape }
  }

  /** The total and the first key of the page, from the cache while the database is unchanged. */
  async function boundariesFor(query: ExportOrdersQuery): Promise<{ total: number; start: [Date, number] | undefined }> {
    const stamp = await changeStamp()
    const key = JSON.stringify([query.window, query.store, query.includeInvalid])
    let cached = boundaryCache.get(key)
    if (!cached || cached.stamp !== stamp) {
      const { where, values, shape } = filterOf(query, true)
      const { rows } = await pool.query<[string]>({
        name: `shipments-export-count-${shape}`,
        text: `SELECT count(*) FROM shipments_orders o WHERE ${where}`,
        values,
        rowMode: 'array',
      })
      cached = { stamp, boundaries: { total: Number(rows[0][0]), starts: new Map() } }
      boundaryCache.delete(key)
      if (boundaryCache.size >= MAX_CACHED_QUERIES) boundaryCache.delete(boundaryCache.keys().next().value!)
      boundaryCache.set(key, cached)
    }
    const { total, starts } = cached.boundaries
    const offset = (query.page - 1) * query.pageSize
    if (offset >= total) return { total, start: undefined }
    if (!starts.has(offset)) {
      const { where, values, parameter, shape } = filterOf(query, true)
      // Walking from the nearer end makes the last page cost what the first does.
      const fromEnd = offset > total / 2
      const { rows } = await pool.query<[Date, number]>({
        name: `shipments-export-start-${fromEnd ? 'end-' : ''}${shape}`,
        text: `SELECT o.date_updated, o.id FROM shipments_orders o WHERE ${where}
                ORDER BY ${fromEnd ? 'o.date_updated DESC, o.id DESC' : 'o.date_updated, o.id'} LIMIT 1 OFFSET ${parameter(fromEnd ? total - 1 - offset : offset)}`,
        values,
        rowMode: 'array',
      })
      starts.set(offset, rows[0])
    }
    return { total, start: starts.get(offset) }
  }

  return async function exportOrders(query: ExportOrdersQuery): Promise<ExportOrdersPage> {
    // PostgreSQL text cannot hold NUL: a store value with one names no order (as on SQLite) rather than failing the query.
    if (query.store?.value.includes('\u0000')) return { orders: [], total: 0 }
    const { total, start } = await boundariesFor(query)
    if (!start) return { orders: [], total }
    // A page starts at its start key, which already lies inside the window: no lower bound needed.
    const { where, values, parameter, shape } = filterOf(query, false)
    const { rows } = await pool.query<unknown[]>({
      name: `shipments-export-page-${shape}`,
      text: `SELECT ${PAGE_SELECT}
               FROM ${EXPORT_FROM}
              WHERE ${where} AND (o.date_updated, o.id) >= (${parameter(start[0])}, ${parameter(start[1])})
              ORDER BY o.date_updated, o.id
              LIMIT ${parameter(query.pageSize)}`,
      values,
      rowMode: 'array',
    })
    const items = await pool.query<unknown[]>({
      name: 'shipments-export-items',
      text: `SELECT ${ITEM_COLUMNS} FROM shipments_order_line_items WHERE order_id = ANY($1::int[]) ORDER BY order_id, id`,
      values: [rows.map((row) => row[PAGE_COLUMN.id])],
      rowMode: 'array',
    })
    return { orders: toExportOrders(rows, items.rows), total }
  }
}
