// The data-layer contract of carrier checkpoints: each scan a tracking service reported for a shipment
// (or one of its parcels), kept once and read in the carrier's time order.

export interface CheckpointRow {
  id: number
  shipmentId: number
  /** The parcel whose tracking number the event named, or null for the shipment's own number. */
  parcelId: number | null
  /** The tracking number the event named. */
  trackingNumber: string
  /** The integration (handle) that reported it. */
  source: string
  /** The carrier's time of the scan as an instant: the order of the timeline. */
  occurredAt: Date
  /** The carrier's time exactly as sent, with its offset when the service gave one (the scan's local time). */
  occurredAtText: string
  message: string | null
  /** The place as people read it ("Memphis, TN, US"). */
  location: string | null
  /** The service's status of the scan (EasyPost `status`, AfterShip `tag`). */
  status: string | null
  /** The service's finer status (EasyPost `status_detail`, AfterShip `subtag`). */
  subStatus: string | null
  /** Who signed for the parcel, when the carrier said. */
  signedBy: string | null
  /** The natural key: the same scan sent again in a later event is the same row. */
  dedupeKey: string
  createdAt: Date
}

export type NewCheckpoint = Omit<CheckpointRow, 'id' | 'createdAt'>

/** At most this many checkpoints are read for one shipment (a parcel on the road for months sends fewer). */
export const CHECKPOINTS_READ_LIMIT = 500

/** The outbox messages the checkpoints added cause, written in the same transaction. */
export interface CheckpointMessages<Message, Claim> {
  of: (added: CheckpointRow[]) => Message[]
  claimFor: Claim | null
}

export interface CheckpointData<Message = unknown, Claim = unknown, Written = unknown> {
  /**
   * Adds the checkpoints not stored yet (same shipment and dedupe key), with the messages `messages`
   * makes of those added, in one transaction: answers the rows added and the messages written.
   */
  addCheckpoints(rows: readonly NewCheckpoint[], now: Date, messages?: CheckpointMessages<Message, Claim>): Promise<{ added: CheckpointRow[]; messages: Written[] }>
  /** The shipment's checkpoints in carrier-time order (oldest first), at most `CHECKPOINTS_READ_LIMIT`, newest kept. */
  shipmentCheckpoints(shipmentId: number): Promise<CheckpointRow[]>
}
