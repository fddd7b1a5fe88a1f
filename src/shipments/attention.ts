// The attention list: completed orders whose active shipments do not hold every shippable line in full.
// Its rows are kept (shipments_attention_orders), decided again by an outbox job after every change of an
// order's allocation, and built once in the background for a database made before they existed, so the
// list and its count read only their own rows at any store size.
import type { DataLayer, NewOutboxMessage } from '../db/data-layer.js'
import type { JobHandler } from '../outbox/dispatcher.js'
import type { CompletedOrder, OrderLine, OrderStore, OrderSummary } from '../order-store.js'

/** An order line with what the order's active shipments hold of it. */
export interface AllocatedLine extends OrderLine {
  allocated: number
  /** What is left to allocate (0 for a line that does not ship). */
  unallocated: number
}

export interface OrderAllocation {
  order: OrderSummary
  /** null when the order store gives no lines (order-level shipments only). */
  lines: AllocatedLine[] | null
}

/** A completed order whose active shipments do not hold every shippable line in full. */
export interface AttentionOrder {
  orderId: number
  reference: string
  statusHandle: string | null
  dateOrdered: Date | null
  customer: string | null
  /** Shippable lines not held in full. */
  linesMissing: number
  /** Units of those lines left to allocate. */
  unitsMissing: number
}

export interface AttentionPage {
  orders: AttentionOrder[]
  total: number
  page: number
  perPage: number
}

/** The outbox job that decides an order's attention row again after a change of its allocation. */
export const ATTENTION_REFRESH_JOB = 'attentionRefresh'
/** The package-state key set once every completed order has been judged for the attention list. */
const ATTENTION_BUILT = 'attentionRowsBuilt'

/** An order line with what the allocation holds of it and what is left. */
export const allocatedLine = (line: OrderLine, allocated: ReadonlyMap<number, number>): AllocatedLine => {
  const held = allocated.get(line.id) ?? 0
  return { ...line, allocated: held, unallocated: line.shippable ? Math.max(0, line.quantity - held) : 0 }
}

export function createAttentionList(deps: { data: DataLayer; orderStore: OrderStore; clock: () => number }) {
  const { data, orderStore } = deps
  /** Whether the order store gives what the attention list is made of (completed orders and their lines). */
  const keepsAttention = Boolean(orderStore.listCompletedOrders && orderStore.orderLines)

  /** The job that decides the order's attention row again, after the change that writes it commits. */
  const attentionRefresh = (orderId: number): NewOutboxMessage => ({
    kind: 'job',
    name: ATTENTION_REFRESH_JOB,
    orderingKey: `attention:order:${orderId}`,
    payload: { orderId },
  })

  /**
   * Decides the order's attention row from the order store (is it completed, what are its lines) and
   * what its active shipments hold, read under the order's lock: the row is right after every change,
   * whichever instance made it, and refreshes of one order never cross.
   */
  async function refreshAttention(orderId: number): Promise<void> {
    if (!orderStore.listCompletedOrders || !orderStore.orderLines || !Number.isSafeInteger(orderId)) return
    // The completed order itself, with its lines: the page of completed orders that starts with it.
    const [candidate] = await orderStore.listCompletedOrders({ afterId: orderId - 1, limit: 1 })
    const order = candidate?.id === orderId ? candidate : null
    await data.refreshAttention(orderId, (allocated) => (order ? attentionRow(order, allocated) : null))
  }

  function attentionRow(order: CompletedOrder, allocated: ReadonlyMap<number, number>): AttentionOrder | null {
    const missing = order.lines.map((line) => allocatedLine(line, allocated)).filter((line) => line.unallocated > 0)
    if (missing.length === 0) return null
    return {
      orderId: order.id,
      reference: order.reference,
      statusHandle: order.statusHandle,
      dateOrdered: order.dateOrdered,
      customer: order.customer,
      linesMissing: missing.length,
      unitsMissing: missing.reduce((sum, line) => sum + line.unallocated, 0),
    }
  }

  /**
   * How the order's attention row is decided inside a change's own transaction, for the package's own
   * order store (the job's read of the order, made before the transaction instead of after the commit;
   * a change of the order itself refreshes its row on its own).
   */
  async function attentionDecider(orderId: number): Promise<(allocated: ReadonlyMap<number, number>) => AttentionOrder | null> {
    const [candidate] = orderStore.listCompletedOrders ? await orderStore.listCompletedOrders({ afterId: orderId - 1, limit: 1 }) : []
    const order = candidate?.id === orderId ? candidate : null
    return (allocated) => (order ? attentionRow(order, allocated) : null)
  }

  const attentionRefreshJob: JobHandler = {
    retryDelayMs: (attempt) => Math.min(1000 * 2 ** (attempt - 1), 60 * 60 * 1000),
    async run(job) {
      await refreshAttention((job.payload as { orderId: number }).orderId)
      return { state: 'done' }
    },
  }

  /**
   * Judges every completed order once, for a database whose attention rows were never built (one made
   * before they existed): 500 orders at a time, each in a turn of the event loop of its own, so the
   * host is never held for long; changes made meanwhile decide their own orders' rows as usual.
   */
  async function buildAttentionRows(): Promise<void> {
    if (!orderStore.listCompletedOrders || !orderStore.orderLines) return
    if ((await data.packageState(ATTENTION_BUILT)) !== null) return
    for (let afterId = 0; ; ) {
      const batch = await orderStore.listCompletedOrders({ afterId, limit: 500 })
      if (batch.length === 0) break
      const allocations = await data.allocations(batch.map((order) => order.id))
      for (const order of batch) {
        if (attentionRow(order, allocations.get(order.id) ?? new Map()) === null) continue
        // Decided again under the order's lock: a change since the read above is not undone.
        await data.refreshAttention(order.id, (allocated) => attentionRow(order, allocated))
      }
      afterId = batch.at(-1)!.id
      if (batch.length < 500) break
      await new Promise<void>((resolve) => setImmediate(resolve))
    }
    await data.setPackageState(ATTENTION_BUILT, new Date(deps.clock()).toISOString())
  }

  /**
   * Completed orders whose active shipments do not hold every shippable line in full, oldest first,
   * with the lines and units missing. Empty for an order store without `listCompletedOrders` and lines.
   */
  async function attention(query: { page?: number | undefined; perPage?: number | undefined; afterOrderId?: number | undefined } = {}): Promise<AttentionPage> {
    const page = Math.min(2_147_483_647, Math.max(1, Math.floor(query.page ?? 1)))
    const perPage = Math.min(100, Math.max(1, Math.floor(query.perPage ?? 50)))
    if (!orderStore.listCompletedOrders || !orderStore.orderLines) return { orders: [], total: 0, page, perPage }
    // The kept rows only: their count and page cost the same at any store size.
    const afterOrderId = query.afterOrderId !== undefined && Number.isSafeInteger(query.afterOrderId) ? query.afterOrderId : undefined
    const [orders, total] = await Promise.all([
      data.attentionRows(afterOrderId !== undefined ? { afterOrderId, limit: perPage } : { offset: (page - 1) * perPage, limit: perPage }),
      data.countAttentionRows(),
    ])
    return { orders, total, page, perPage }
  }

  return { keepsAttention, attentionRefresh, refreshAttention, attentionDecider, attentionRefreshJob, buildAttentionRows, attention }
}

export type AttentionList = ReturnType<typeof createAttentionList>
