// The store admins' overview figures: shipments by status, shipped per day in the site timezone, late
// shipments and failing pushes. Every query is bounded, whatever the number of shipments.
import type { DataLayer } from '../db/data-layer.js'
import { formatIsoWithOffset, startOfDay, wallTimeAt } from '../time.js'
import { SHIPMENT_STATUSES, toShipment, type Shipment, type ShipmentStatus } from '../model/shipment.js'

/** How many days the shipped-per-day series covers, today included. */
export const OVERVIEW_DAYS = 30
/** How many late shipments and failing pushes the overview lists (their totals are counted in full). */
export const OVERVIEW_LIST_LIMIT = 20

export interface FailingPush {
  shipmentId: number
  shipmentReference: string
  integrationHandle: string
  /** ISO 8601 in the site timezone. */
  lastPushAt: string | null
  lastPushError: string
  pushAttempts: number
}

export interface ShipmentsOverview {
  /** Shipments not deleted, by status (every status, 0 included). */
  byStatus: Record<ShipmentStatus, number>
  /** The last OVERVIEW_DAYS days, oldest first and today last; `date` is YYYY-MM-DD in the site timezone. */
  shippedPerDay: Array<{ date: string; count: number }>
  /** Scheduled to ship before now, enabled, neither shipped nor cancelled: the earliest first. */
  late: { shipments: Shipment[]; total: number }
  /** External references whose last push failed: the newest attempt first. */
  failingPushes: { pushes: FailingPush[]; total: number }
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0')
const dayKey = (instant: number, timeZone: string) => {
  const wall = wallTimeAt(instant, timeZone)
  return `${pad(wall.year, 4)}-${pad(wall.month)}-${pad(wall.day)}`
}

export function createShipmentsOverview(deps: { data: DataLayer; timeZone: string; clock: () => number }) {
  const { data, timeZone, clock } = deps
  return async function overview(): Promise<ShipmentsOverview> {
    const now = clock()
    const firstDay = startOfDay(now, timeZone, 1 - OVERVIEW_DAYS)
    const tomorrow = startOfDay(now, timeZone, 1)
    const [counts, quarterHours, late, pushes] = await Promise.all([
      data.countShipmentsByStatus(),
      data.countShippedByQuarterHour(new Date(firstDay), new Date(tomorrow)),
      data.lateShipments(new Date(now), OVERVIEW_LIST_LIMIT),
      data.failingPushes(OVERVIEW_LIST_LIMIT),
    ])
    const perDay = new Map<string, number>()
    for (let offset = 1 - OVERVIEW_DAYS; offset <= 0; offset++) perDay.set(dayKey(startOfDay(now, timeZone, offset), timeZone), 0)
    // A quarter hour never straddles midnight: every zone's offset is a whole number of quarter hours.
    for (const { quarterHour, count } of quarterHours) {
      const key = dayKey(quarterHour * 900_000, timeZone)
      if (perDay.has(key)) perDay.set(key, perDay.get(key)! + count)
    }
    return {
      byStatus: Object.fromEntries(SHIPMENT_STATUSES.map((status) => [status, counts[status] ?? 0])) as Record<ShipmentStatus, number>,
      shippedPerDay: [...perDay].map(([date, count]) => ({ date, count })),
      late: { shipments: late.rows.map((row) => toShipment(row, timeZone)), total: late.total },
      failingPushes: {
        pushes: pushes.rows.map((row) => ({ ...row, lastPushAt: row.lastPushAt ? formatIsoWithOffset(row.lastPushAt.getTime(), timeZone) : null })),
        total: pushes.total,
      },
    }
  }
}

export type ShipmentsOverviewQuery = ReturnType<typeof createShipmentsOverview>
