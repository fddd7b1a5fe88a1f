// PostgreSQL queries of the reference order store's export: page boundaries, one page of orders with
// their addresses, and their line items. Three named (server-prepared) statements per query shape.
import { createPostgresChangeStamp, type PostgresDatabase } from './connection.js'
import { EXPORT_FROM, ITEM_COLUMNS, PAGE_COLUMN, pageSelect, problemExpression, toExportOrders } from '../export-query.js'
import type { ExportOrdersPage, ExportOrdersQuery } from '../../orders/order-store.js'

const PROBLEM = problemExpression((column) => `coalesce(trim(${column}) ~ '^[A-Za-z]{2}$', false)`)

interface Boundaries {
  total: number
  /** The first (dateUpdated, id) of each page. */
  starts: Array<[Date, number]>
}

const MAX_CACHED_QUERIES = 32

export function createPostgresOrderExport(db: PostgresDatabase, localWrites: () => number) {
  const pool = db.$client
  // Export requests are rare and boundaries are costly: the sequence is read on every request.
  const changeStamp = createPostgresChangeStamp(db, localWrites, 0)
  const boundaryCache = new Map<string, { stamp: string; boundaries: Boundaries }>()

  /** The filter of a query, its parameters numbered in order; the same shape always gives the same text. */
  function filterOf(query: ExportOrdersQuery) {
    const values: unknown[] = []
    const parameter = (value: unknown) => `$${values.push(value)}`
    const conditions = ['o.is_completed']
    if (query.window) conditions.push(`o.date_updated < ${parameter(new Date(query.window.before))}`)
    if (query.store) conditions.push(`o.fields ->> ${parameter(query.store.fieldHandle)} = ${parameter(query.store.value)}`)
    if (!query.includeInvalid) conditions.push(`(${PROBLEM}) IS NULL`)
    const shape = `${query.window ? 'w' : ''}${query.store ? 's' : ''}${query.includeInvalid ? 'i' : ''}`
    return { where: conditions.join(' AND '), values, parameter, shape }
  }

  async function boundariesFor(query: ExportOrdersQuery): Promise<Boundaries> {
    const stamp = await changeStamp()
    const key = JSON.stringify([query.window, query.store, query.includeInvalid, query.pageSize])
    const cached = boundaryCache.get(key)
    if (cached && cached.stamp === stamp) return cached.boundaries
    const { where, values, parameter, shape } = filterOf(query)
    // The window is exclusive and compared at whole seconds: after 12:00:00 means from 12:00:01.
    const boundaryWhere = query.window ? `${where} AND o.date_updated >= ${parameter(new Date(query.window.after + 1000))}` : where
    const { rows } = await pool.query<[Date, number, string]>({
      name: `shipments-export-boundaries-${shape}`,
      text: `SELECT date_updated, id, total FROM (
               SELECT o.date_updated, o.id, row_number() OVER (ORDER BY o.date_updated, o.id) AS position, count(*) OVER () AS total
                 FROM ${EXPORT_FROM} WHERE ${boundaryWhere}
             ) numbered WHERE (position - 1) % ${parameter(query.pageSize)} = 0`,
      values,
      rowMode: 'array',
    })
    const boundaries: Boundaries = { total: rows.length > 0 ? Number(rows[0][2]) : 0, starts: rows.map((row) => [row[0], row[1]]) }
    boundaryCache.delete(key)
    if (boundaryCache.size >= MAX_CACHED_QUERIES) boundaryCache.delete(boundaryCache.keys().next().value!)
    boundaryCache.set(key, { stamp, boundaries })
    return boundaries
  }

  return async function exportOrders(query: ExportOrdersQuery): Promise<ExportOrdersPage> {
    const { total, starts } = await boundariesFor(query)
    const start = starts[query.page - 1]
    if (!start) return { orders: [], total }
    const { where, values, parameter, shape } = filterOf(query)
    const { rows } = await pool.query<unknown[]>({
      name: `shipments-export-page-${shape}`,
      // Without invalid orders the filter has already made every problem NULL: not computed twice.
      text: `SELECT ${pageSelect(query.includeInvalid ? PROBLEM : 'NULL')}
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
