// The order exchange's activity log: what ShipStation asked, what it got, and why it was refused.
import type { FastifyBaseLogger } from 'fastify'
import type { DataLayer, ExchangeActivityRow } from '../db/data-layer.js'
import { formatIsoWithOffset } from '../time.js'

/**
 * How many requests the log keeps: every EXCHANGE_ACTIVITY_PRUNE_EVERY-th write drops the rows beyond
 * the newest this many (so at most 1,099 rows are held, and a request usually costs one insert).
 */
export const EXCHANGE_ACTIVITY_KEPT = 1000
export const EXCHANGE_ACTIVITY_PRUNE_EVERY = 100

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
}

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
            action: requestText(entry.action, 32) ?? '',
            page: entry.page,
            orderNumber: requestText(entry.orderNumber, 64),
            ordersExported: entry.ordersExported,
            statusCode: entry.statusCode,
            reason: requestText(entry.reason, 200),
            createdAt: new Date(deps.clock()),
          },
          { keep: EXCHANGE_ACTIVITY_KEPT, every: EXCHANGE_ACTIVITY_PRUNE_EVERY },
        )
      } catch (error) {
        deps.logger.error({ err: error }, 'Order exchange: the activity log could not be written')
      }
    },

    /** The newest requests first, at most `limit` (1 to EXCHANGE_ACTIVITY_KEPT). */
    async recent(limit = 100): Promise<ExchangeActivity[]> {
      const bounded = Math.min(EXCHANGE_ACTIVITY_KEPT, Math.max(1, Math.floor(limit)))
      return (await deps.data.exchangeActivity(bounded)).map(present)
    },
  }
}
