// The contract for manifests: a carrier's end-of-day form (USPS's SCAN form through EasyPost, say) for the
// labels bought through one integration, for one carrier and one ship-from address. A label (by its
// label operation) is in at most one manifest: a unique key decides a race between two instances.

/** pending: written before the provider is asked; created: the provider made it; failed: it refused. */
export type ManifestState = 'pending' | 'created' | 'failed'

export interface ManifestRow {
  id: number
  integrationId: number
  carrier: string
  /** The ship-from address the labels left from, as text (one line), for the list. */
  shipFrom: string
  state: ManifestState
  /** The provider's id of the manifest (EasyPost: `sf_...`). */
  externalId: string | null
  /** The form to print (a PDF, as the provider serves it). */
  formUrl: string | null
  parcelCount: number
  /** Why it failed, in the provider's words. */
  error: string | null
  userId: string | null
  createdAt: Date
  updatedAt: Date
}

export interface ManifestParcelRow {
  manifestId: number
  parcelId: number
  /** The label operation that bought the label manifested: unique, so a label is in one manifest at most. */
  operationId: string
}

/** A label that may go into a manifest: bought (its operation purchased and still the parcel's), in no manifest yet. */
export interface EligibleLabelRow {
  operationId: string
  parcelId: number
  shipmentId: number
  integrationId: number
  /** The carrier the label was bought from, as the parcel keeps it (the operation's when the parcel has none). */
  carrier: string
  /** The provider's id of the purchase (EasyPost's `shp_...`). */
  externalId: string
  trackingNumber: string
  /** When the purchase was begun: the day a label counts for. */
  createdAt: Date
}

export interface EligibleLabelQuery {
  integrationId: number
  /** The day's bounds, as instants: from inclusive, to exclusive. */
  from: Date
  to: Date
  /** One carrier only (compared without regard to case). */
  carrier?: string | undefined
  limit: number
}

export interface NewManifest {
  integrationId: number
  carrier: string
  shipFrom: string
  userId: string | null
}

export interface ManifestListQuery {
  limit: number
  /** Manifests older than this id (the next page). */
  beforeId?: number | undefined
}

/**
 * Margin around a day's bounds when its label operations are found by id: ids follow insertion, and the
 * time stamped on a row comes from one clock or another (instances' clocks differ by less than this).
 */
export const OPERATION_CLOCK_MARGIN_MS = 10 * 60_000

/**
 * The first id at or above which every label operation was begun at or after `at`, found by halving the
 * ids (each probe one primary-key lookup: the first operation at or after an id), so a day's labels are
 * read as a range of the primary key, never by a scan of every operation ever bought.
 */
export async function firstOperationIdFrom(
  probe: (id: number) => Promise<{ id: number; createdAt: Date } | undefined>,
  bounds: { min: number; max: number },
  at: Date,
): Promise<number> {
  let low = bounds.min
  let high = bounds.max + 1
  while (low < high) {
    const middle = Math.floor((low + high) / 2)
    const found = await probe(middle)
    if (!found || found.id >= high || found.createdAt.getTime() >= at.getTime()) high = middle
    else low = found.id + 1
  }
  return low
}

export interface ManifestStore<Message, Row> {
  /** The day's labels of an integration that no manifest holds yet, oldest first, at most `limit`. */
  eligible(query: EligibleLabelQuery): Promise<EligibleLabelRow[]>
  /**
   * Writes a `pending` manifest and its labels in one transaction. Each label is checked again inside it
   * (still bought, still the parcel's) and one that another manifest took meanwhile is left out (the
   * unique key on operation_id decides a race between instances). undefined, with nothing written,
   * when no label is left.
   */
  create(manifest: NewManifest, labels: ReadonlyArray<{ parcelId: number; operationId: string }>): Promise<{ row: ManifestRow; parcels: ManifestParcelRow[] } | undefined>
  /** The provider made it: its id and form, with the outbox messages of the change in the same transaction. */
  markCreated(id: number, values: { externalId: string; formUrl: string | null }, messages: (row: ManifestRow) => Message[]): Promise<{ row: ManifestRow; messages: Row[] }>
  /** The provider refused: its words. The labels are let go, so a later manifest may take them. */
  markFailed(id: number, error: string): Promise<ManifestRow>
  find(id: number): Promise<ManifestRow | undefined>
  /** The labels of a manifest, by parcel id. */
  parcels(manifestId: number): Promise<ManifestParcelRow[]>
  /** Newest first. */
  list(query: ManifestListQuery): Promise<ManifestRow[]>
}
