// The asynchronous contract for deliveries: a shipment's parcels, their history, label operations with
// their attempt log, rate quotes and the box catalogue. Each engine implements it in its own folder.
// The store is typed over the outbox's message, claim and row and the order address, which data-layer.ts
// supplies (its ParcelStore), so this contract imports nothing from it.

/** An order line in a parcel, by the order store's line id. */
export interface ParcelItem {
  lineItemId: number
  quantity: number
}

/**
 * A parcel as stored. Weights and dimensions are exact decimal strings with their unit (never floats);
 * the label columns are filled by a purchase and cleared by a void.
 */
export interface ParcelRow {
  id: number
  shipmentId: number
  weight: string
  weightUnit: string
  length: string | null
  width: string | null
  height: string | null
  dimensionUnit: string | null
  boxId: number | null
  items: ParcelItem[]
  /** pending, labelled, shipped, delivered. */
  status: string
  trackingNumber: string | null
  trackingUrl: string | null
  carrier: string | null
  service: string | null
  labelUrl: string | null
  labelFormat: string | null
  /** What the label cost, an exact decimal string, with its currency. */
  labelCost: string | null
  labelCurrency: string | null
  /** The label operation that bought the current label. */
  labelOperationId: string | null
  createdAt: Date
  updatedAt: Date
}

/**
 * A parcel as the shipment row keeps a copy of it (`shipments.parcels`, JSON): the same fields, the
 * times as ISO strings. Every parcel change rewrites the copy in its own transaction, so every read of
 * a shipment (lists, events, pushes) carries its parcels without a second query.
 */
export type StoredParcel = Omit<ParcelRow, 'createdAt' | 'updatedAt'> & { createdAt: string; updatedAt: string }

/** The copy of a shipment's parcels that its row keeps. */
export const storedParcels = (rows: ParcelRow[]): StoredParcel[] =>
  rows.map((row) => ({ ...row, createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() }))

/** The columns a parcel change may write. */
export type ParcelColumns = Partial<Omit<ParcelRow, 'id' | 'shipmentId' | 'createdAt'>>

export type NewParcel = Pick<ParcelRow, 'weight' | 'weightUnit' | 'length' | 'width' | 'height' | 'dimensionUnit' | 'boxId' | 'items'>

/** A row of a parcel's history: what happened to it (added, changed, labelPurchased, labelVoided, ...). */
export interface ParcelHistoryRow {
  id: number
  parcelId: number
  shipmentId: number
  action: string
  message: string | null
  userId: string | null
  createdAt: Date
}

export type NewParcelHistory = Pick<ParcelHistoryRow, 'action' | 'message' | 'userId'>

/** pending: committed before the provider is called, outcome not known yet; the others are final. */
export type LabelOperationState = 'pending' | 'purchased' | 'failed' | 'voided'

/** One label purchase: the intent, committed under its operation id before the provider is called. */
export interface LabelOperationRow {
  id: number
  operationId: string
  parcelId: number
  shipmentId: number
  integrationId: number
  providerId: string
  quoteId: number | null
  carrier: string
  service: string
  state: LabelOperationState
  /** The provider's own id of the purchase (EasyPost's `shp_...`), committed as soon as it is known. */
  externalId: string | null
  error: string | null
  userId: string | null
  createdAt: Date
  updatedAt: Date
}

export type NewLabelOperation = Pick<LabelOperationRow, 'operationId' | 'parcelId' | 'shipmentId' | 'integrationId' | 'providerId' | 'quoteId' | 'carrier' | 'service' | 'userId'>

/** One call to a provider and its answer, as the attempt log keeps it (never a secret). */
export interface LabelAttemptRow {
  id: number
  operationId: string
  step: string
  request: Record<string, unknown>
  response: Record<string, unknown>
  statusCode: number | null
  error: string | null
  durationMs: number
  createdAt: Date
}

export type NewLabelAttempt = Omit<LabelAttemptRow, 'id' | 'createdAt'>

/** A stored rate quote: valid until `expiresAt`, for the inputs whose fingerprint it carries. */
export interface RateQuoteRow {
  id: number
  shipmentId: number
  parcelId: number
  integrationId: number
  carrier: string
  service: string
  amount: string
  currency: string
  deliveryDays: number | null
  deliveryDate: string | null
  /** The provider's own ids (EasyPost: the rate and the shipment it was quoted on). */
  externalRateId: string | null
  fingerprint: string
  expiresAt: Date
  createdAt: Date
}

export type NewRateQuote = Omit<RateQuoteRow, 'id' | 'createdAt'>

/** An order line's weight and unit size as the reference store keeps them. */
export interface LineMeasuresRow {
  id: number
  weight: number | null
  weightUnit: string | null
  length: string | null
  width: string | null
  height: string | null
  dimensionUnit: string | null
}

/** A box of the catalogue: inner dimensions, the empty box's weight, the most it may weigh packed. */
export interface BoxRow {
  id: number
  name: string
  innerLength: string
  innerWidth: string
  innerHeight: string
  dimensionUnit: string
  emptyWeight: string
  maxWeight: string
  weightUnit: string
  enabled: boolean
  createdAt: Date
  updatedAt: Date
}

export type BoxValues = Omit<BoxRow, 'id' | 'createdAt' | 'updatedAt'>

/**
 * What a parcel change writes, decided from the parcel as it is inside the write transaction (undefined
 * when inserting). Throw from the plan to refuse: nothing is written.
 */
export interface ParcelPlan<Message, Claim> {
  /** Insert a parcel (the change names a shipment). */
  insert?: NewParcel
  /** Columns of the parcel to write. */
  columns?: ParcelColumns
  /** Delete the parcel (its history and operations go with it). */
  remove?: boolean
  /** A label operation to move on, in the same transaction. */
  operation?: { operationId: string; columns: Partial<Pick<LabelOperationRow, 'state' | 'externalId' | 'error'>> }
  history?: NewParcelHistory
  /** The outbox messages of the change, given the parcel after it and every parcel of its shipment. */
  messages?: (parcel: ParcelRow, parcels: ParcelRow[]) => Message[]
  claimFor?: Claim
}

export interface ParcelChangeOutcome<Row> {
  /** The parcel after the change (as it was before, for a removal). */
  row: ParcelRow
  messages: Row[]
}

export interface ParcelStore<Message, Claim, Row, Address> {
  /** The parcels of a shipment, in creation order. */
  list(shipmentId: number): Promise<ParcelRow[]>
  find(parcelId: number): Promise<ParcelRow | undefined>
  /** The parcel holding this tracking number (the newest), if any. */
  findByTrackingNumber(trackingNumber: string): Promise<ParcelRow | undefined>
  /**
   * Applies a change in one write transaction: the parcel read inside it, the plan's writes, its history
   * row and outbox messages. `target` names the parcel, or the shipment a new parcel goes to. The plan
   * is given the parcel and the number of its shipment's parcels, both read inside the transaction under
   * the shipment's lock, so a limit it checks holds against concurrent changes. undefined: no such parcel
   * (or no such shipment for an insert).
   */
  change(
    target: { parcelId: number } | { shipmentId: number },
    plan: (current: ParcelRow | undefined, shipmentParcelCount: number) => ParcelPlan<Message, Claim>,
  ): Promise<ParcelChangeOutcome<Row> | undefined>

  /** The intent of a purchase; 'busy' when the parcel has a pending or purchased operation already (a unique key decides a race). */
  beginOperation(values: NewLabelOperation): Promise<LabelOperationRow | 'busy'>
  /** The parcel's operation that is pending or purchased (at most one), if any. */
  activeOperation(parcelId: number): Promise<LabelOperationRow | undefined>
  findOperation(operationId: string): Promise<LabelOperationRow | undefined>
  /** Writes operation columns in an autocommit statement of their own (the provider's id, a failure). */
  updateOperation(operationId: string, columns: Partial<Pick<LabelOperationRow, 'state' | 'externalId' | 'error'>>): Promise<void>
  /** The parcel's operations, newest first. */
  operations(parcelId: number): Promise<LabelOperationRow[]>
  recordAttempt(attempt: NewLabelAttempt): Promise<void>
  /** The operation's attempts, in order. */
  attempts(operationId: string): Promise<LabelAttemptRow[]>
  /** Provider calls that failed since `since`, newest first, at most `limit`. */
  failedAttempts(since: Date, limit: number): Promise<LabelAttemptRow[]>

  /** The reference store's weight and size of an order's lines (for packing). */
  orderLineMeasures(orderId: number): Promise<LineMeasuresRow[]>
  /** The reference store's shipping address of an order (the deliveries' ship-to), if it has one. */
  orderShippingAddress(orderId: number): Promise<Address | undefined>

  insertQuotes(quotes: NewRateQuote[]): Promise<RateQuoteRow[]>
  findQuote(id: number): Promise<RateQuoteRow | undefined>

  listBoxes(): Promise<BoxRow[]>
  findBox(id: number): Promise<BoxRow | undefined>
  insertBox(values: BoxValues): Promise<BoxRow>
  updateBox(id: number, values: Partial<BoxValues>): Promise<BoxRow | undefined>
  removeBox(id: number): Promise<boolean>
}
