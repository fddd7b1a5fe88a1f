// The data-layer contract of the admin's read models: the overview's bounded queries and the attention
// list's kept rows.
import type { AttentionRow, ShipmentRow } from './shipments.js'

export type { AttentionRow }

/** A shipment whose last push to an integration failed, for the admin overview. */
export interface FailingPushRow {
  shipmentId: number
  shipmentReference: string
  integrationHandle: string
  lastPushAt: Date | null
  lastPushError: string
  pushAttempts: number
}

/** The admin overview's figures, each query bounded whatever the number of shipments. */
export interface OverviewQueries {
  /** Shipments not deleted, by status (statuses without any are left out): read from the kept counts, never counted. */
  countShipmentsByStatus(): Promise<Record<string, number>>

  /**
   * Shipments not deleted shipped in [from, to), counted per quarter hour since the epoch
   * (`floor(ms / 900000)`): at most one row per quarter hour of the window, so a busy store costs no
   * more rows than a quiet one, and days in any timezone (offsets are whole quarter hours) add up exactly.
   */
  countShippedByQuarterHour(from: Date, to: Date): Promise<Array<{ quarterHour: number; count: number }>>
  /**
   * Enabled shipments, not deleted, neither shipped nor cancelled, scheduled to ship before `now`: the
   * earliest scheduled first, at most `limit`, and how many there are.
   */
  lateShipments(now: Date, limit: number): Promise<{ rows: ShipmentRow[]; total: number }>
  /** External references whose last push failed (shipment not deleted): the newest attempt first, at most `limit`, and how many. */
  failingPushes(limit: number): Promise<{ rows: FailingPushRow[]; total: number }>
}

/** The attention list, kept as rows (see the attentionRefresh job). */
export interface AttentionStore {
  /**
   * Decides the order's attention row from what its active shipments hold now, under the order's lock
   * (so refreshes of one order never cross): `decide` answers the row, or null for none (covered, not
   * completed, or gone). Returns what was kept.
   */
  refreshAttention(orderId: number, decide: (allocated: ReadonlyMap<number, number>) => AttentionRow | null): Promise<AttentionRow | null>
  /** Kept rows, oldest order first: after `afterOrderId` (key paging) or from `offset`, at most `limit`. */
  attentionRows(query: { afterOrderId?: number | undefined; offset?: number | undefined; limit: number }): Promise<AttentionRow[]>
  /** How many rows are kept (a count of the attention rows only). */
  countAttentionRows(): Promise<number>
}
