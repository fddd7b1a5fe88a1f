// Reads of shipments (one, a page, its history, its carrier checkpoints) and the small writes beside
// them: recording a tracking service's scans, soft-deleting and restoring. Rule: reads stay flat as the
// store grows (DESIGN.md), and a write here commits its events in its own transaction, as the update path does.
import { AllocationExceededError } from '../db/data-layer.js'
import { ShipmentsErrors } from '../errors.js'
import { toCheckpoint, type Checkpoint } from '../model/checkpoints.js'
import { toHistoryEntry, type Shipment, type ShipmentHistoryEntry, type ShipmentStatus } from '../model/shipment.js'
import { allocationRefusal, shipmentKey, type ScansToKeep, type ShipmentServiceContext } from './service-context.js'

export interface ListShipmentsQuery {
  orderId?: number | undefined
  status?: ShipmentStatus | undefined
  /**
   * Shipments whose reference starts with this text, ASCII letters in either case (an order's reference
   * finds its shipments; an index range, as fast at a million shipments as at ten thousand), or whose
   * tracking number is this text, ignoring case, spaces and dashes.
   */
  search?: string | undefined
  /** Shipments with this tracking number, ignoring case, spaces and dashes (`1z 999-aa1` finds `1Z999AA1`); indexed. */
  trackingNumber?: string | undefined
  /** Shipments whose external reference at this integration (by id) has this external id. */
  externalReference?: { integrationId: number; externalId: string } | undefined
  includeDeleted?: boolean | undefined
  page?: number | undefined
  perPage?: number | undefined
  /**
   * Key paging: the shipments after this id (the last one of the page before), as cheap deep in the
   * list as at its start. `page` is then only reported back.
   */
  afterId?: number | undefined
}

export interface ShipmentPage {
  shipments: Shipment[]
  total: number
  page: number
  perPage: number
}

export function createShipmentReads(shared: ShipmentServiceContext) {
  const { deps, present, requireRow, checkpointsOf } = shared
  const { data, dispatcher, timeZone } = deps
  const { keepsAttention, attentionRefresh } = shared.attentionList

  async function get(id: number): Promise<Shipment | null> {
    const row = Number.isSafeInteger(id) ? await data.findShipment(id) : undefined
    return row ? present(row) : null
  }

  async function list(query: ListShipmentsQuery = {}): Promise<ShipmentPage> {
    // Clamped like the API's bounds, so a host's call cannot reach the database with an offset it refuses.
    const page = Math.min(2_147_483_647, Math.max(1, Math.floor(query.page ?? 1)))
    const perPage = Math.min(100, Math.max(1, Math.floor(query.perPage ?? 50)))
    const afterId = query.afterId !== undefined && Number.isSafeInteger(query.afterId) && query.afterId >= 0 ? Math.min(query.afterId, 2_147_483_647) : undefined
    // Exact matches: a NUL (which PostgreSQL refuses in a parameter) is in no stored value.
    if (query.trackingNumber?.includes('\u0000') || query.externalReference?.externalId.includes('\u0000')) return { shipments: [], total: 0, page, perPage }
    const { rows, total } = await data.listShipments({
      orderId: query.orderId,
      status: query.status,
      // Text no reference can hold (NUL, which PostgreSQL refuses in a parameter) matches nothing else either.
      referenceStartsWith: query.search?.trim().replaceAll('\u0000', '') || undefined,
      trackingNumber: query.trackingNumber,
      externalReference: query.externalReference,
      includeDeleted: query.includeDeleted ?? false,
      limit: perPage,
      ...(afterId !== undefined ? { afterId, offset: 0 } : { offset: (page - 1) * perPage }),
    })
    return { shipments: rows.map(present), total, page, perPage }
  }

  /** The shipment's carrier checkpoints in carrier-time order, oldest first. */
  async function checkpoints(id: number): Promise<Checkpoint[]> {
    await requireRow(id)
    return (await data.checkpoints.shipmentCheckpoints(id)).map((row) => toCheckpoint(row, timeZone))
  }

  /**
   * Keeps the scans a tracking service reported for a shipment (or one of its parcels, by id) that are
   * not kept yet; answers how many were new. Idempotent: a repeat adds nothing. The scans of an event
   * that also updates the shipment go with the update instead (`UpdateContext.checkpoints`), so they
   * commit with it and a refused update keeps none.
   */
  async function recordCheckpoints(shipmentId: number, scans: ScansToKeep): Promise<number> {
    if (scans.checkpoints.length === 0) return 0
    const shipment = await requireRow(shipmentId)
    const { rows, messages } = checkpointsOf(shipmentId, scans)
    const written = await data.checkpoints.addCheckpoints(rows, new Date(deps.clock()), { of: (added) => messages(added, shipment), claimFor: dispatcher.claim })
    await dispatcher.deliver(written.messages)
    return written.added.length
  }

  async function history(id: number): Promise<ShipmentHistoryEntry[]> {
    await requireRow(id)
    return (await data.shipmentHistory(id)).map((row) => toHistoryEntry(row, timeZone))
  }

  async function setDeleted(id: number, deleted: boolean): Promise<Shipment> {
    const changed = Number.isSafeInteger(id)
      ? await data
          .setShipmentDeleted(id, deleted, new Date(deps.clock()), {
            of: (row) => [
              { kind: 'event', name: deleted ? 'shipmentDeleted' : 'shipmentRestored', orderingKey: shipmentKey(row.id), payload: { shipment: present(row) } },
              ...(keepsAttention ? [attentionRefresh(row.orderId)] : []),
            ],
            claimFor: dispatcher.claim,
          })
          .catch((error: unknown) => {
            throw error instanceof AllocationExceededError ? allocationRefusal(error) : error
          })
      : undefined
    if (!changed) throw new ShipmentsErrors.ShipmentNotFound(id)
    await dispatcher.deliver(changed.messages)
    return present(changed.row)
  }

  return { get, list, checkpoints, recordCheckpoints, history, setDeleted }
}
