// The reads of returns: one, a page, an order's, a return's history, and what an order's lines may still return.
import type { ReturnListQuery } from '../db/returns.js'
import { ShipmentsErrors } from '../errors.js'
import { toHistoryEntry, type Return, type ReturnHistoryEntry } from '../model/return.js'
import type { ReturnServiceContext } from './service-context.js'

/** Per order line: what shipped, what returns hold, and what may still be returned. */
export interface ReturnableLine {
  lineItemId: number
  sku: string | null
  name: string | null
  shipped: number
  returned: number
  returnable: number
}

export function createReturnReads(shared: ReturnServiceContext) {
  const { deps, present, requireReturn } = shared
  const { data, timeZone } = deps

  async function returnable(orderId: number): Promise<ReturnableLine[]> {
    const order = Number.isInteger(orderId) && orderId > 0 ? await deps.orderStore.findOrder(orderId) : null
    if (!order) throw new ShipmentsErrors.OrderNotFound(orderId)
    const [ledger, lines] = await Promise.all([data.returns.ledger(order.id), deps.orderStore.orderLines?.(order.id) ?? null])
    const ids = new Set([...(lines ?? []).map((line) => line.id), ...ledger.shipped.keys()])
    return [...ids].map((lineItemId) => {
      const line = lines?.find((each) => each.id === lineItemId)
      const shipped = ledger.shipped.get(lineItemId) ?? 0
      const returned = ledger.returned.get(lineItemId) ?? 0
      return { lineItemId, sku: line?.sku ?? null, name: line?.name ?? null, shipped, returned, returnable: Math.max(0, shipped - returned) }
    })
  }

  async function list(query: Partial<Omit<ReturnListQuery, 'limit'>> & { limit?: number | undefined } = {}): Promise<Return[]> {
    const limit = Math.min(Math.max(1, query.limit ?? 50), 200)
    return (await data.returns.list({ ...query, limit })).map(present)
  }

  return {
    returnable,
    list,
    get: async (id: number): Promise<Return | null> => {
      const row = Number.isInteger(id) && id > 0 ? await data.returns.find(id) : undefined
      return row ? present(row) : null
    },
    ofOrder: async (orderId: number): Promise<Return[]> => (await data.returns.ofOrder(orderId)).map(present),
    history: async (id: number): Promise<ReturnHistoryEntry[]> => {
      await requireReturn(id)
      return (await data.returns.history(id)).map((row) => toHistoryEntry(row, timeZone))
    },
  }
}
