// The data-layer contract of the order exchange's (ShipStation's) activity log.

/** One request of the order exchange, as its activity log keeps it. */
export interface ExchangeActivityRow {
  id: number
  /** export, shipnotify, or what the request named (empty when it named none). */
  action: string
  page: number | null
  orderNumber: string | null
  ordersExported: number | null
  statusCode: number
  /** A short reason: the error message a refused request got; null when it succeeded. */
  reason: string | null
  createdAt: Date
}

export type NewExchangeActivityRow = Omit<ExchangeActivityRow, 'id'>

/** The order exchange's activity log, bounded by its retention. */
export interface ExchangeActivityStore {
  /**
   * Appends a row to the order exchange's activity log. Every `retention.every`th row also drops the
   * answered rows (status below 400) beyond the newest `retention.keep` and the refused ones beyond the
   * newest `retention.keepRefused`, so a request usually costs one statement, refusals never evict
   * answered requests, and the log never holds more than keep + keepRefused + every - 1 rows.
   */
  recordExchangeActivity(entry: NewExchangeActivityRow, retention: { keep: number; keepRefused: number; every: number }): Promise<void>
  /** The newest rows of the activity log, newest first; with `refused`, only refused (true) or answered (false) ones. */
  exchangeActivity(limit: number, refused?: boolean): Promise<ExchangeActivityRow[]>

  /** The activity log's newest row of this action, answered or refused. */
  newestExchangeActivity(action: string): Promise<ExchangeActivityRow | undefined>
}
