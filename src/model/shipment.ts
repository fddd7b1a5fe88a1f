// The shipment as clients see it (spec 2.1), and its history rows.
import type { HistoryRow, ShipmentRow } from '../db/data-layer.js'
import { formatIsoWithOffset } from '../time.js'
import { presentItems, type ShipmentItem } from './items.js'
import { toParcel, type Parcel } from './parcel.js'

export const SHIPMENT_STATUSES = ['new', 'in_progress', 'on_hold', 'fulfilled', 'shipped', 'cancelled'] as const
export type ShipmentStatus = (typeof SHIPMENT_STATUSES)[number]

/** The statuses as people read them (admin pages, notifications). */
export const STATUS_LABELS: Readonly<Record<ShipmentStatus, string>> = {
  new: 'New',
  in_progress: 'In progress',
  on_hold: 'On hold',
  fulfilled: 'Fulfilled',
  shipped: 'Shipped',
  cancelled: 'Cancelled',
}

export function isShipmentStatus(value: unknown): value is ShipmentStatus {
  return typeof value === 'string' && (SHIPMENT_STATUSES as readonly string[]).includes(value)
}


export interface Shipment {
  id: number
  reference: string
  orderId: number
  status: ShipmentStatus
  dateShipped: string | null
  dateScheduledShip: string | null
  trackingNumber: string | null
  trackingUrl: string | null
  carrier: string | null
  service: string | null
  fulfillmentNotes: string | null
  shippingNotes: string | null
  enabled: boolean
  fields: Record<string, unknown>
  /** The order lines the shipment holds; empty for an order-level shipment. */
  items: ShipmentItem[]
  /** The parcels (deliveries), in the order they were added; empty for a shipment without parcels. */
  parcels: Parcel[]
  /** Beyond spec 2.1, for admin panels; the update endpoint's response leaves these out. */
  dateCreated: string
  dateUpdated: string
  dateDeleted: string | null
  /** The delivery date the carrier expects (a date, or a date-time with its offset, as the tracking service sent it); null when none. */
  estimatedDelivery: string | null
  /** The integration (handle) the estimate came from. */
  estimatedDeliverySource: string | null
}

export interface ShipmentHistoryEntry {
  id: number
  shipmentId: number
  fromStatus: ShipmentStatus | null
  toStatus: ShipmentStatus
  message: string | null
  userId: string | null
  sourceIntegration: string | null
  externalCode: string | null
  dateCreated: string
}

export function toShipment(row: ShipmentRow, timeZone: string): Shipment {
  const format = (date: Date | null) => (date ? formatIsoWithOffset(date.getTime(), timeZone) : null)
  return {
    id: row.id,
    reference: row.reference,
    orderId: row.orderId,
    status: row.status as ShipmentStatus,
    dateShipped: format(row.dateShipped),
    dateScheduledShip: format(row.dateScheduledShip),
    trackingNumber: row.trackingNumber,
    trackingUrl: row.trackingUrl,
    carrier: row.carrier,
    service: row.service,
    fulfillmentNotes: row.fulfillmentNotes,
    shippingNotes: row.shippingNotes,
    enabled: row.enabled,
    fields: row.fields,
    items: presentItems(row.items),
    parcels: row.parcels.map((parcel) => toParcel(parcel, timeZone)),
    estimatedDelivery: row.estimatedDelivery,
    estimatedDeliverySource: row.estimatedDeliverySource,
    dateCreated: formatIsoWithOffset(row.createdAt.getTime(), timeZone),
    dateUpdated: formatIsoWithOffset(row.updatedAt.getTime(), timeZone),
    dateDeleted: format(row.dateDeleted),
  }
}

export function toHistoryEntry(row: HistoryRow, timeZone: string): ShipmentHistoryEntry {
  return {
    id: row.id,
    shipmentId: row.shipmentId,
    fromStatus: row.fromStatus as ShipmentStatus | null,
    toStatus: row.toStatus as ShipmentStatus,
    message: row.message,
    userId: row.userId,
    sourceIntegration: row.sourceIntegration,
    externalCode: row.sourceExternalCode,
    dateCreated: formatIsoWithOffset(row.createdAt.getTime(), timeZone),
  }
}
