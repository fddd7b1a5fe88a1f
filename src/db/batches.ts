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
