// What the documents show, as plain data: a host's own renderer gets the same.
import type { PostalAddress } from '../order-store.js'

/** The shop as the documents' header shows it. */
export interface DocumentShop {
  name: string
  /** Address lines, top to bottom. */
  address: string[]
  /** A PNG or JPEG image, drawn at most 150 x 50 pt. */
  logo: Uint8Array | null
}

/** One line of a packing slip: what goes in the box of one order line. */
export interface PackingSlipLine {
  lineItemId: number | null
  sku: string | null
  name: string
  /** In this box (this parcel, or this shipment when it has no parcels). */
  quantity: number
  /** What the order line was ordered, when the order store gives lines; shown as "N of M" when they differ. */
  ordered: number | null
}

/** The lines of one parcel, or of the shipment when it has no parcels (`parcel` null). */
export interface PackingSlipGroup {
  /** "Parcel 1 of 2", or "Not in a parcel" for lines of a shipment with parcels that no parcel holds; null without parcels. */
  title: string | null
  parcel: { id: number; trackingNumber: string | null; carrier: string | null; weight: string; weightUnit: string } | null
  lines: PackingSlipLine[]
}

/** Everything one packing slip shows: what `documents.renderPackingSlip` receives. */
export interface PackingSlipData {
  shop: DocumentShop
  shipment: { id: number; reference: string; status: string; carrier: string | null; service: string | null; trackingNumber: string | null }
  order: { id: number; reference: string; dateOrdered: Date | null }
  shipTo: PostalAddress | null
  groups: PackingSlipGroup[]
  /** The shipment's shipping notes and the order's customer notes, in that order, without blanks. */
  notes: string[]
  /** True when the order ships in more than one shipment (the slip says so). */
  partOfSeveral: boolean
}

/** One row of a pick list: an SKU (or a line without one) summed over a batch. */
export interface PickListRow {
  sku: string | null
  name: string
  /** The `location` of the lines (OrderLine.location), or null; rows are sorted by it, then SKU. */
  location: string | null
  quantity: number
  /** The references of the shipments it goes to, each once, in the batch's order. */
  shipments: string[]
}

/** What a slip shows; every part is on by default (the `documents.show` option). */
export interface PackingSlipShow {
  logo: boolean
  shopAddress: boolean
  orderDate: boolean
  shipTo: boolean
  barcode: boolean
  sku: boolean
  /** Lines grouped per parcel when the shipment has parcels; false lists the shipment's lines once. */
  parcels: boolean
  /** "N of M" when a line ships part of what was ordered. */
  orderedQuantity: boolean
  notes: boolean
}

export const DEFAULT_SHOW: PackingSlipShow = {
  logo: true,
  shopAddress: true,
  orderDate: true,
  shipTo: true,
  barcode: true,
  sku: true,
  parcels: true,
  orderedQuantity: true,
  notes: true,
}

/** One line of a commercial invoice: values exact decimals in the invoice's currency. */
export interface CommercialInvoiceLine {
  description: string
  sku: string | null
  tariffNumber: string | null
  originCountry: string | null
  quantity: number
  /** The line's total divided by its quantity, rounded up to the total's places (at least two): never below the true unit value. */
  unitValue: string
  totalValue: string
  weight: { value: string; unit: string }
}

/** Everything a commercial invoice shows: a parcel's customs declaration with its seller and buyer. */
export interface CommercialInvoiceData {
  /** Stable: the shipment's reference and the parcel's id (`INV-<reference>-<parcelId>`). */
  invoiceNumber: string
  /** When the declaration was last saved: the invoice describes that declaration, so it keeps its date while the declaration is unchanged. */
  date: Date
  seller: { name: string; address: PostalAddress | null }
  buyer: PostalAddress | null
  shipment: { id: number; reference: string }
  order: { id: number; reference: string }
  parcel: { id: number; carrier: string | null; trackingNumber: string | null }
  currency: string
  lines: CommercialInvoiceLine[]
  totalValue: string
  totalWeight: { value: string; unit: string }
  incoterm: string
  /** From the contents type: Sale, Gift, Sample, Return, Documents, or the declaration's explanation for other. */
  reasonForExport: string
  eelPfc: string | null
  signer: string | null
}
