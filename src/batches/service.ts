// Label batches (`app.shipments.batches`): labels for every parcel of the chosen shipments, bought by the
// shipping rules as a durable job that any instance finishes (worker.ts). Here: a batch created after
// every check (nothing is written for a refused one), read with its counts and a page of its items,
// listed, its failed items retried and its unstarted items cancelled.
import type { DataLayer, LabelBatchCounts, LabelBatchItemCursor, LabelBatchItemRow, LabelBatchItemState, LabelBatchRow, LabelBatchSettings, LabelBatchState, NewLabelBatchItem } from '../db/data-layer.js'
import { BatchErrors, ShipmentValidationError } from '../errors.js'
import { LABEL_FORMATS, type LabelFormat } from '../gateway/delivery-provider.js'
import type { Shipment, ShipmentStatus } from '../model/shipment.js'
import type { ShipmentService } from '../shipments/service.js'
import { formatIsoWithOffset } from '../time.js'
import type { ResolvedBatchesOptions } from './options.js'

/** The shipment list's filter, resolved to shipments once, when the batch is created. */
export interface LabelBatchFilter {
  status?: ShipmentStatus | undefined
  /** A reference prefix or a tracking number, as the shipment list's search. */
  search?: string | undefined
  orderId?: number | undefined
}

export type LabelBatchSelection = { shipmentIds: number[]; filter?: undefined } | { filter: LabelBatchFilter; shipmentIds?: undefined }

export interface LabelBatchInput {
  /** Suggest parcels from the box catalogue for a shipment that has none (default false: it is skipped). */
  suggestParcels?: boolean | undefined
  /** The label format bought (default PDF). */
  labelFormat?: LabelFormat | undefined
}

export interface LabelBatchContext {
  userId?: string | null | undefined
}

/** A batch as the API and the admin pages show it. */
export interface LabelBatch {
  id: number
  state: LabelBatchState
  settings: LabelBatchSettings
  counts: LabelBatchCounts
  /** Items in all; `done` of them are final (bought, failed, skipped or cancelled). */
  total: number
  done: number
  userId: string | null
  dateCreated: string
  dateUpdated: string
  dateFinished: string | null
}

export interface LabelBatchItem {
  id: number
  position: number
  shipmentId: number
  parcelId: number | null
  state: LabelBatchItemState
  rule: string | null
  carrier: string | null
  service: string | null
  operationId: string | null
  reason: string | null
  attempts: number
  nextAttemptAt: string | null
}

export interface LabelBatchPage {
  batch: LabelBatch
  items: LabelBatchItem[]
  /** The cursor of the next page of items, or null on the last. */
  nextCursor: string | null
}

export interface LabelBatchServiceDependencies {
  data: DataLayer
  shipments: Pick<ShipmentService, 'get' | 'list'>
  options: Pick<ResolvedBatchesOptions, 'maxShipments'>
  timeZone: string
  clock: () => number
  /** A batch was written: the local worker looks at once instead of at its next poll. */
  created?: (() => void) | undefined
}

const MAX_ID = 2_147_483_647
/** Shipments read at once while a batch is checked: bounded, so a batch of 1000 never floods the pool. */
const READ_CONCURRENCY = 16
/** The shipment list's page while a filter is resolved. */
const FILTER_PAGE = 100
/** The shipments a refusal names, at most; the rest are counted. */
const NAMED_IN_REFUSAL = 10

const cursorOf = (item: LabelBatchItemRow) => `${item.position}.${item.id}`
function parseCursor(cursor: string | undefined): { position: number; id: number } | undefined {
  if (cursor === undefined) return undefined
  const match = /^(\d{1,10})\.(\d{1,10})$/.exec(cursor)
  if (!match || Number(match[1]) > MAX_ID || Number(match[2]) > MAX_ID) throw new ShipmentValidationError({ cursor: ['is not a cursor this list gave'] })
  return { position: Number(match[1]), id: Number(match[2]) }
}

const isId = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_ID

function namedList(ids: number[]): string {
  const named = ids.slice(0, NAMED_IN_REFUSAL).join(', ')
  return ids.length > NAMED_IN_REFUSAL ? `${named} and ${ids.length - NAMED_IN_REFUSAL} more` : named
}

/** A batch as shown, its dates in the site's timezone. */
function batchAsShown(row: LabelBatchRow, counts: LabelBatchCounts, timeZone: string): LabelBatch {
  const at = (date: Date | null) => (date === null ? null : formatIsoWithOffset(date.getTime(), timeZone))
  const total = counts.queued + counts.bought + counts.failed + counts.skipped + counts.cancelled
  return {
    id: row.id,
    state: row.state,
    settings: row.settings,
    counts,
    total,
    done: total - counts.queued,
    userId: row.userId,
    dateCreated: at(row.createdAt)!,
    dateUpdated: at(row.updatedAt)!,
    dateFinished: at(row.finishedAt),
  }
}

const itemAsShown = (row: LabelBatchItemRow, timeZone: string): LabelBatchItem => ({
  id: row.id,
  position: row.position,
  shipmentId: row.shipmentId,
  parcelId: row.parcelId,
  state: row.state,
  rule: row.rule,
  carrier: row.carrier,
  service: row.service,
  operationId: row.operationId,
  reason: row.reason,
  attempts: row.attempts,
  nextAttemptAt: row.nextAttemptAt === null ? null : formatIsoWithOffset(row.nextAttemptAt.getTime(), timeZone),
})

export function createLabelBatches(deps: LabelBatchServiceDependencies) {
  const { data, timeZone } = deps

  const presentBatch = (row: LabelBatchRow, counts: LabelBatchCounts) => batchAsShown(row, counts, timeZone)
  const presentItem = (row: LabelBatchItemRow) => itemAsShown(row, timeZone)

  async function requireBatch(id: number): Promise<LabelBatchRow> {
    const row = isId(id) ? await data.batches.findBatch(id) : undefined
    if (!row) throw new BatchErrors.BatchNotFound(id)
    return row
  }

  /** The settings, each checked; every problem named by field. */
  function checkedSettings(input: LabelBatchInput, errors: Record<string, string[]>): LabelBatchSettings {
    const suggestParcels = input.suggestParcels ?? false
    const labelFormat = input.labelFormat ?? 'PDF'
    if (typeof suggestParcels !== 'boolean') errors.suggestParcels = ['must be true or false']
    if (!(LABEL_FORMATS as readonly string[]).includes(labelFormat)) errors.labelFormat = [`must be one of ${LABEL_FORMATS.join(', ')}`]
    return { suggestParcels, labelFormat }
  }

  /** The shipments named, in the order given (a repeat is taken once), each read; the missing and deleted named. */
  async function namedShipments(ids: unknown, errors: Record<string, string[]>): Promise<Shipment[]> {
    if (!Array.isArray(ids) || ids.length === 0) {
      errors.shipmentIds = ['must name at least one shipment']
      return []
    }
    const bad = ids.filter((id) => !isId(id))
    if (bad.length > 0) {
      errors.shipmentIds = [`must be shipment ids (positive integers); ${bad.slice(0, NAMED_IN_REFUSAL).map((each) => JSON.stringify(each) ?? String(each)).join(', ')} is not`]
      return []
    }
    const unique = [...new Set(ids as number[])]
    if (unique.length > deps.options.maxShipments) {
      errors.shipmentIds = [`a batch holds at most ${deps.options.maxShipments} shipments (batches.maxShipments); ${unique.length} were given`]
      return []
    }
    const found: Array<Shipment | null> = []
    for (let start = 0; start < unique.length; start += READ_CONCURRENCY) {
      found.push(...(await Promise.all(unique.slice(start, start + READ_CONCURRENCY).map((id) => deps.shipments.get(id)))))
    }
    const missing = unique.filter((_, index) => !found[index] || found[index]!.dateDeleted !== null)
    if (missing.length > 0) errors.shipmentIds = [`no such shipment (or deleted): ${namedList(missing)}`]
    return found.filter((shipment): shipment is Shipment => shipment !== null && shipment.dateDeleted === null)
  }

  /** The shipments the filter lists now, in the list's order, read page by page; refused past the bound. */
  async function filteredShipments(filter: LabelBatchFilter, errors: Record<string, string[]>): Promise<Shipment[]> {
    if (typeof filter !== 'object' || filter === null) {
      errors.filter = ['must be an object: { status, search, orderId }']
      return []
    }
    if (filter.orderId !== undefined && !isId(filter.orderId)) errors.filter = ['orderId must be an order id (a positive integer)']
    if (filter.search !== undefined && (typeof filter.search !== 'string' || filter.search.length > 255)) errors.filter = ['search must be text of at most 255 characters']
    if (errors.filter) return []
    const shipments: Shipment[] = []
    let afterId: number | undefined = 0
    while (afterId !== undefined) {
      const page = await deps.shipments.list({ status: filter.status, search: filter.search, orderId: filter.orderId, perPage: FILTER_PAGE, afterId })
      shipments.push(...page.shipments)
      if (shipments.length > deps.options.maxShipments) {
        errors.filter = [`matches more than ${deps.options.maxShipments} shipments (batches.maxShipments): narrow it, or make several batches`]
        return []
      }
      afterId = page.shipments.length === FILTER_PAGE ? page.shipments.at(-1)!.id : undefined
    }
    if (shipments.length === 0) errors.filter = ['matches no shipment']
    return shipments
  }

  /**
   * Creates a batch: every check first (the shipments exist, the bound, the settings), then the batch and
   * its items in one transaction, one item per parcel in pick order (the shipments as given or listed,
   * their parcels in the order added); a shipment without parcels gets one item without a parcel, which
   * the job gives suggested parcels or skips. The job starts on whichever instance takes it.
   */
  async function create(selection: LabelBatchSelection, input: LabelBatchInput = {}, context: LabelBatchContext = {}): Promise<LabelBatch> {
    const errors: Record<string, string[]> = {}
    const settings = checkedSettings(input ?? {}, errors)
    const given = selection ?? ({} as LabelBatchSelection)
    let shipments: Shipment[] = []
    if ((given.shipmentIds === undefined) === (given.filter === undefined)) errors.shipmentIds = ['give either shipmentIds or filter (one of them)']
    else if (given.shipmentIds !== undefined) shipments = await namedShipments(given.shipmentIds, errors)
    else shipments = await filteredShipments(given.filter!, errors)
    if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)

    const items: NewLabelBatchItem[] = []
    for (const shipment of shipments) {
      if (shipment.parcels.length === 0) items.push({ position: items.length, shipmentId: shipment.id, parcelId: null })
      for (const parcel of shipment.parcels) items.push({ position: items.length, shipmentId: shipment.id, parcelId: parcel.id })
    }
    const row = await data.batches.createBatch({ settings, userId: context.userId ?? null }, items, new Date(deps.clock()))
    deps.created?.()
    return presentBatch(row, { queued: items.length, bought: 0, failed: 0, skipped: 0, cancelled: 0 })
  }

  /** The batch with its counts and a page of its items in pick order (of one state when asked). */
  async function get(id: number, query: { state?: LabelBatchItemState | undefined; cursor?: string | undefined; perPage?: number | undefined } = {}): Promise<LabelBatchPage> {
    const row = await requireBatch(id)
    const perPage = Math.min(500, Math.max(1, Math.floor(query.perPage ?? 100)))
    const [counts, rows] = await Promise.all([data.batches.counts(id), data.batches.items(id, { state: query.state, after: parseCursor(query.cursor), limit: perPage + 1 })])
    const items = rows.slice(0, perPage)
    return { batch: presentBatch(row, counts), items: items.map(presentItem), nextCursor: rows.length > perPage ? cursorOf(items.at(-1)!) : null }
  }

  /** Batches newest first, a page at a time (`beforeId`: the last id of the page before). */
  async function list(query: { beforeId?: number | undefined; perPage?: number | undefined } = {}): Promise<{ batches: LabelBatch[]; nextBeforeId: number | null }> {
    const perPage = Math.min(100, Math.max(1, Math.floor(query.perPage ?? 20)))
    const rows = await data.batches.listBatches({ beforeId: isId(query.beforeId) ? query.beforeId : undefined, limit: perPage + 1 })
    const page = rows.slice(0, perPage)
    const counts = await Promise.all(page.map((row) => data.batches.counts(row.id)))
    return { batches: page.map((row, index) => presentBatch(row, counts[index]!)), nextBeforeId: rows.length > perPage ? page.at(-1)!.id : null }
  }

  /**
   * The failed items back to queued, the batch running again (a finished one is queued for any instance).
   * A parcel whose earlier purchase has no known outcome is finished by the purchase's own recovery (looked
   * up at the provider), never bought twice. 409 for a cancelled batch.
   */
  async function retry(id: number): Promise<{ batch: LabelBatch; retried: number }> {
    const current = await requireBatch(id)
    const outcome = await data.batches.retryFailed(id, new Date(deps.clock()))
    if (!outcome) throw new BatchErrors.BatchClosed(id, current.state, 'retried')
    if (outcome.retried > 0) deps.created?.()
    return { batch: presentBatch(outcome.batch, await data.batches.counts(id)), retried: outcome.retried }
  }

  /** Cancels the items not started yet; purchases under way finish and are recorded. 409 once the batch is finished or cancelled. */
  async function cancel(id: number): Promise<{ batch: LabelBatch; cancelled: number }> {
    const current = await requireBatch(id)
    const outcome = await data.batches.cancelBatch(id, new Date(deps.clock()))
    if (!outcome) throw new BatchErrors.BatchClosed(id, current.state, 'cancelled')
    return { batch: presentBatch(outcome.batch, await data.batches.counts(id)), cancelled: outcome.cancelled }
  }

  return { create, get, list, retry, cancel, boughtParcels: (id: number, limit: number) => boughtParcels(data, requireBatch, id, limit) }
}

export type LabelBatchService = ReturnType<typeof createLabelBatches>

/**
 * The parcels a batch bought, in pick order, for its print job: read a page at a time through the
 * batch's index, at most `limit` (a print job's bound); refused when the batch bought none.
 */
async function boughtParcels(data: Pick<DataLayer, 'batches'>, requireBatch: (id: number) => Promise<unknown>, id: number, limit: number): Promise<Array<{ shipmentId: number; parcelId: number }>> {
  await requireBatch(id)
  const parcels: Array<{ shipmentId: number; parcelId: number }> = []
  let after: LabelBatchItemCursor | undefined
  for (;;) {
    const pageSize = Math.min(500, limit - parcels.length)
    const page = await data.batches.items(id, { state: 'bought', after, limit: pageSize })
    for (const item of page) if (item.parcelId !== null) parcels.push({ shipmentId: item.shipmentId, parcelId: item.parcelId })
    if (page.length < pageSize || parcels.length >= limit) break
    after = { position: page.at(-1)!.position, id: page.at(-1)!.id }
  }
  if (parcels.length === 0) throw new BatchErrors.NothingToPrint(id)
  return parcels
}
