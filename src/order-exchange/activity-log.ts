// The order exchange's activity log: what ShipStation asked, what it got, and why it was refused.
import type { FastifyBaseLogger } from 'fastify'
import type { DataLayer, ExchangeActivityRow } from '../db/data-layer.js'
import { formatIsoWithOffset } from '../time.js'

/**
 * How many answered requests (status below 400) the log keeps: every EXCHANGE_ACTIVITY_PRUNE_EVERY-th
 * write drops the answered rows beyond the newest this many, and the refused rows beyond the newest
 * EXCHANGE_ACTIVITY_REFUSED_KEPT, each against its own bound: anyone can send refused requests, and a
 * flood of them must not evict the exports and ship notifications that worked. At most 2,099 rows are
 * held, and a request usually costs one insert.
 */
export const EXCHANGE_ACTIVITY_KEPT = 1000
/** How many refused requests (status 400 and above) the log keeps, apart from the answered ones. */
export const EXCHANGE_ACTIVITY_REFUSED_KEPT = 1000
export const EXCHANGE_ACTIVITY_PRUNE_EVERY = 100
/** The largest page the log stores (its column is int4 on PostgreSQL); the page asked for may be larger. */
const LARGEST_PAGE = 2_147_483_647

/** One request as the activity log shows it. */
export interface ExchangeActivity {
  id: number
  /** ISO 8601 in the site timezone. */
  date: string
  action: string
  page: number | null
  orderNumber: string | null
  ordersExported: number | null
  statusCode: number
  reason: string | null
}

export interface ExchangeActivityEntry {
  action: string | undefined
  page: number | null
  orderNumber: string | null | undefined
  ordersExported: number | null
  statusCode: number
  reason: string | null
  /**
   * True when the request proved its credentials. Of a request that did not (anyone can send one), the
   * log keeps no text it chose: only an action the exchange knows, never its order number.
   */
  authenticated: boolean
}

/** An action the exchange knows, or ''. */
const knownAction = (action: string | undefined) => (action === 'export' || action === 'shipnotify' ? action : '')

/**
 * Text from the request, bounded and stripped of control characters (PostgreSQL refuses NUL): the log
 * shows what was asked without letting a request store anything it likes.
 */
function requestText(value: string | null | undefined, maxLength: number): string | null {
  if (typeof value !== 'string') return null
  // eslint-disable-next-line no-control-regex
  const clean = value.replace(/[\u0000-\u001f\u007f]/g, '').trim()
  if (clean === '') return null
  const characters = Array.from(clean)
  return characters.length > maxLength ? `${characters.slice(0, maxLength - 1).join('')}…` : clean
}

export type ExchangeActivityLog = ReturnType<typeof createExchangeActivityLog>

export function createExchangeActivityLog(deps: { data: DataLayer; logger: FastifyBaseLogger; timeZone: string; clock: () => number }) {
  const present = (row: ExchangeActivityRow): ExchangeActivity => ({
    id: row.id,
    date: formatIsoWithOffset(row.createdAt.getTime(), deps.timeZone),
    action: row.action,
    page: row.page,
    orderNumber: row.orderNumber,
    ordersExported: row.ordersExported,
    statusCode: row.statusCode,
    reason: row.reason,
  })

  return {
    /** Records one request; a failure to record is logged, never passed on to the request. */
    async record(entry: ExchangeActivityEntry): Promise<void> {
      try {
        await deps.data.recordExchangeActivity(
          {
            action: entry.authenticated ? (requestText(entry.action, 32) ?? '') : knownAction(entry.action),
            page: entry.page === null ? null : Math.min(entry.page, LARGEST_PAGE),
            orderNumber: entry.authenticated ? requestText(entry.orderNumber, 64) : null,
            ordersExported: entry.ordersExported,
            statusCode: entry.statusCode,
            reason: requestText(entry.reason, 200),
            createdAt: new Date(deps.clock()),
          },
          { keep: EXCHANGE_ACTIVITY_KEPT, keepRefused: EXCHANGE_ACTIVITY_REFUSED_KEPT, every: EXCHANGE_ACTIVITY_PRUNE_EVERY },
        )
      } catch (error) {
        deps.logger.error({ err: error }, 'Order exchange: the activity log could not be written')
      }
    },

    /**
     * The newest requests first, at most `limit` (1 to 2,000); with `refused`, only the refused (true)
     * or only the answered (false) ones.
     */
    async recent(limit = 100, filter: { refused?: boolean | undefined } = {}): Promise<ExchangeActivity[]> {
      const bounded = Math.min(EXCHANGE_ACTIVITY_KEPT + EXCHANGE_ACTIVITY_REFUSED_KEPT, Math.max(1, Math.floor(limit)))
      return (await deps.data.exchangeActivity(bounded, filter.refused)).map(present)
    },

    /** The newest request of this action (`export`, `shipnotify`), answered or refused; null when there is none. */
    async newest(action: string): Promise<ExchangeActivity | null> {
      const row = await deps.data.newestExchangeActivity(action)
      return row ? present(row) : null
    },
  }
}
