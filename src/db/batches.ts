// The asynchronous contract for label batches: a batch of parcels whose labels are bought by the shipping
// rules, as a durable job that any instance may hold (a lease) and finish. Each engine implements it in
// its own folder. Typed over the outbox's message, claim and row, which data-layer.ts supplies.

/**
 * queued: waiting for an instance to take it; running: an instance holds its lease (or held it and
 * stopped: the lease runs out and another takes it); finished: every item is final; cancelled: the
 * items not started were cancelled.
 */
export type LabelBatchState = 'queued' | 'running' | 'finished' | 'cancelled'

/**
 * queued: not tried yet, or tried and due again at `nextAttemptAt` (a provider's 429, an unknown
 * outcome); bought: the parcel has its label (bought by this batch, or found bought); failed: the
 * carrier refused, in its words; skipped: nothing to buy, with the reason; cancelled: the batch was
 * cancelled before it was tried.
 */
export type LabelBatchItemState = 'queued' | 'bought' | 'failed' | 'skipped' | 'cancelled'

/** What the batch was asked to do, kept with it so that any instance finishes it the same way. */
export interface LabelBatchSettings {
  /** Suggest parcels from the box catalogue for a shipment that has none, before buying. */
  suggestParcels: boolean
  labelFormat: 'PDF' | 'ZPL' | 'PNG'
}

export interface LabelBatchRow {
  id: number
  state: LabelBatchState
  settings: LabelBatchSettings
  /** The instance holding the job and until when; null when nobody does. */
  leaseOwner: string | null
  leaseExpiresAt: Date | null
  userId: string | null
  createdAt: Date
  updatedAt: Date
  finishedAt: Date | null
}

export interface LabelBatchItemRow {
  id: number
  batchId: number
  /** The pick order: the order shipments were given in (or listed in), their parcels in creation order. */
  position: number
  shipmentId: number
  /** null until a shipment without parcels has had parcels suggested (or is skipped for having none). */
  parcelId: number | null
  state: LabelBatchItemState
  /** The rule that chose the rate (its name), once chosen. */
  rule: string | null
  carrier: string | null
  service: string | null
  /** The label operation of the purchase, once begun. */
  operationId: string | null
  /** Why it failed (the carrier's words) or was skipped. */
  reason: string | null
  attempts: number
  /** When a queued item that was tried is due again (a 429's back-off); null: at once. */
  nextAttemptAt: Date | null
  updatedAt: Date
}

export type NewLabelBatchItem = Pick<LabelBatchItemRow, 'position' | 'shipmentId' | 'parcelId'>

export type LabelBatchItemColumns = Partial<Pick<LabelBatchItemRow, 'state' | 'parcelId' | 'rule' | 'carrier' | 'service' | 'operationId' | 'reason' | 'attempts' | 'nextAttemptAt'>>

/** The counts of a batch's items by state. */
export type LabelBatchCounts = Record<LabelBatchItemState, number>

/** A key for paging a batch's items in pick order: the last item of the page before. */
export interface LabelBatchItemCursor {
  position: number
  id: number
}

/** The outbox messages a batch's end causes, written in the transaction that finishes it. */
export interface LabelBatchMessages<Message, Claim> {
  of: (batch: LabelBatchRow, counts: LabelBatchCounts, failed: LabelBatchItemRow[]) => Message[]
  claimFor: Claim | null
}

export interface LabelBatchStore<Message = unknown, Claim = unknown, Written = unknown> {
  /** Writes the batch (queued) and its items (queued) in one transaction. */
  createBatch(batch: { settings: LabelBatchSettings; userId: string | null }, items: readonly NewLabelBatchItem[], now: Date): Promise<LabelBatchRow>
  findBatch(id: number): Promise<LabelBatchRow | undefined>
  /** Newest first, by id; `beforeId` pages on. */
  listBatches(query: { beforeId?: number | undefined; limit: number }): Promise<LabelBatchRow[]>
  /**
   * Takes the lease of the oldest batch that is queued or running with its lease free or run out, in one
   * atomic statement: it is then running, held by `owner` until `now + leaseMs`. Undefined: none is due.
   */
  claimBatch(owner: string, leaseMs: number, now: Date): Promise<LabelBatchRow | undefined>
  /** Extends the lease while `owner` still holds it and the batch still runs; false: it was lost (or cancelled). */
  renewLease(batchId: number, owner: string, leaseMs: number, now: Date): Promise<boolean>
  /** Lets the lease go (a stopping instance), so another instance takes the batch at once. */
  releaseLease(batchId: number, owner: string): Promise<void>
  /**
   * At most `limit` queued items that are due (`nextAttemptAt` null or past), in pick order, leaving out
   * those named in `except` (this instance's purchases under way).
   */
  dueItems(batchId: number, now: Date, limit: number, except: readonly number[]): Promise<LabelBatchItemRow[]>
  /**
   * Writes an item's outcome. With `onlyIfQueued` nothing is written unless the item is still queued (a
   * cancel came first); a bought label is written whatever the item's state, as it is a fact.
   */
  updateItem(itemId: number, columns: LabelBatchItemColumns, now: Date, onlyIfQueued: boolean): Promise<LabelBatchItemRow | undefined>
  /**
   * A shipment's item without a parcel becomes one item per parcel, in one transaction: the first parcel
   * takes the item, the others are new queued items at the same position (after it, by id).
   */
  expandItem(itemId: number, parcelIds: readonly number[], now: Date): Promise<void>
  /** The batch's items counted by state: one grouped count over the batch's own index range. */
  counts(batchId: number): Promise<LabelBatchCounts>
  /** A page of the batch's items in pick order, after `after`, of one state when asked. */
  items(batchId: number, query: { state?: LabelBatchItemState | undefined; after?: LabelBatchItemCursor | undefined; limit: number }): Promise<LabelBatchItemRow[]>
  /**
   * Finishes a running batch that `owner` holds and whose items are all final, with the messages `messages`
   * makes (its counts and failed items), in one transaction; undefined when it was not so (nothing written).
   */
  finishBatch(batchId: number, owner: string, now: Date, messages: LabelBatchMessages<Message, Claim>): Promise<{ batch: LabelBatchRow; messages: Written[] } | undefined>
  /**
   * Failed items back to queued (due at once, their reason cleared) and the batch queued again when it had
   * finished, in one transaction; answers how many items, or undefined for no such batch or a cancelled one.
   */
  retryFailed(batchId: number, now: Date): Promise<{ batch: LabelBatchRow; retried: number } | undefined>
  /**
   * Cancels a batch that is queued or running: its queued items are cancelled and its lease let go, in one
   * transaction; purchases under way finish and are written. Undefined for no such batch or a final one.
   */
  cancelBatch(batchId: number, now: Date): Promise<{ batch: LabelBatchRow; cancelled: number } | undefined>
}
