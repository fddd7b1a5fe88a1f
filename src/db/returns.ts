// The asynchronous contract for returns (reverse shipments): the return rows with their lines, their
// history, and the change that checks a return's lines against what shipped under the order's lock.
// Typed over the outbox's message, claim and row, which data-layer.ts supplies (its ReturnStore).

export const RETURN_STATES = ['requested', 'authorised', 'rejected', 'label_sent', 'in_transit', 'received', 'closed'] as const
export type ReturnState = (typeof RETURN_STATES)[number]

/** What arrived of a line, by condition: written when the return is received. */
export interface ReceivedQuantities {
  resellable: number
  damaged: number
  missing: number
}

/** A line of a return: an order line, the units sent back, why, and (once received) what arrived. */
export interface ReturnLine {
  lineItemId: number
  quantity: number
  reason: string
  note: string | null
  received: ReceivedQuantities | null
}

/** pending: the intent is committed and the provider may have been called; purchased: the label is on the return. */
export type ReturnLabelState = 'pending' | 'purchased'

export interface ReturnRow {
  id: number
  orderId: number
  /** The order's reference and a number: `1001-r001`. */
  reference: string
  state: ReturnState
  lines: ReturnLine[]
  /** Why the return was rejected (or the message of its last change). */
  stateMessage: string | null
  trackingNumber: string | null
  trackingUrl: string | null
  carrier: string | null
  service: string | null
  labelUrl: string | null
  labelFormat: string | null
  /** What the label cost, an exact decimal string, with its currency. */
  labelCost: string | null
  labelCurrency: string | null
  /** The label purchase: our stable id (the provider's reference), the provider's own id, the integration. */
  labelOperationId: string | null
  labelExternalId: string | null
  labelIntegrationId: number | null
  labelState: ReturnLabelState | null
  dateReceived: Date | null
  createdAt: Date
  updatedAt: Date
}

/** The columns a return change may write. */
export type ReturnColumns = Partial<Omit<ReturnRow, 'id' | 'orderId' | 'reference' | 'createdAt' | 'updatedAt'>>

/** A row of a return's history: a state change or an action, who did it and through what. */
export interface ReturnHistoryRow {
  id: number
  returnId: number
  fromState: string | null
  toState: string
  message: string | null
  userId: string | null
  /** Where the change came from: `api`, `admin`, `label`, an integration's handle (tracking). */
  source: string
  createdAt: Date
}

export type NewReturnHistory = Pick<ReturnHistoryRow, 'fromState' | 'toState' | 'message' | 'userId' | 'source'>

/**
 * What the order holds per line for returns, read under the order's lock: units on shipped shipments,
 * and units on returns that hold them (every return but rejected ones, and `exceptReturnId`'s).
 */
export interface ReturnLedger {
  shipped: ReadonlyMap<number, number>
  returned: ReadonlyMap<number, number>
}

/** What a return change writes, decided under the lock from the return as it is (undefined when creating). */
export interface ReturnPlan<Message, Claim> {
  /** Create a return of the order (the change names an order): numbered after the order's returns. */
  insert?: { orderReference: string; lines: ReturnLine[]; state: ReturnState }
  columns?: ReturnColumns
  history?: NewReturnHistory
  messages?: (row: ReturnRow) => Message[]
  claimFor?: Claim
}

export interface ReturnChangeOutcome<Row> {
  row: ReturnRow
  messages: Row[]
}

export interface ReturnListQuery {
  state?: string | undefined
  orderId?: number | undefined
  /** Returns created before this date (their age). */
  createdBefore?: Date | undefined
  /** Key paging: returns with a smaller id (newest first). */
  beforeId?: number | undefined
  limit: number
}

export interface ReturnStore<Message, Claim, Row> {
  find(id: number): Promise<ReturnRow | undefined>
  /** The returns of an order, oldest first. */
  ofOrder(orderId: number): Promise<ReturnRow[]>
  /** Newest first, by key. */
  list(query: ReturnListQuery): Promise<ReturnRow[]>
  /** The newest return holding this tracking number, if any. */
  findByTrackingNumber(trackingNumber: string): Promise<ReturnRow | undefined>
  /** Newest first. */
  history(returnId: number): Promise<ReturnHistoryRow[]>
  /** What shipped and what returns hold per line of the order, now (no lock: for showing). */
  ledger(orderId: number): Promise<ReturnLedger>
  /**
   * Applies a change in one write transaction under the order's lock (the lock allocation takes): the
   * return read inside it, the ledger of its order, the plan's writes, its history row and outbox
   * messages. Throw from the plan to refuse: nothing is written. undefined: no such return.
   */
  change(
    target: { returnId: number } | { orderId: number },
    plan: (current: ReturnRow | undefined, ledger: ReturnLedger) => ReturnPlan<Message, Claim>,
  ): Promise<ReturnChangeOutcome<Row> | undefined>
  /**
   * Commits the intent of a label purchase: the operation id, the integration, the carrier and service
   * on the return, only when it has no operation (false then). Written alone, before the provider is called.
   */
  beginLabel(returnId: number, operation: { operationId: string; integrationId: number; carrier: string; service: string }): Promise<boolean>
  /** Writes label bookkeeping columns (the provider's id, a failed purchase cleared) in a statement of its own. */
  updateLabel(returnId: number, columns: Pick<ReturnColumns, 'labelExternalId' | 'labelOperationId' | 'labelIntegrationId' | 'labelState' | 'carrier' | 'service'>): Promise<void>
}

/** The counted units per line: a rejected return holds none. */
export function returnedByLine(rows: Iterable<Pick<ReturnRow, 'state' | 'lines' | 'id'>>, exceptId: number | null): Map<number, number> {
  const returned = new Map<number, number>()
  for (const row of rows) {
    if (row.state === 'rejected' || row.id === exceptId) continue
    for (const line of row.lines) returned.set(line.lineItemId, (returned.get(line.lineItemId) ?? 0) + line.quantity)
  }
  return returned
}

/** Units on shipped shipments per line. */
export function shippedByLine(rows: Iterable<{ items: Array<{ lineItemId: number; quantity: number }> }>): Map<number, number> {
  const shipped = new Map<number, number>()
  for (const row of rows) for (const item of row.items) shipped.set(item.lineItemId, (shipped.get(item.lineItemId) ?? 0) + item.quantity)
  return shipped
}
