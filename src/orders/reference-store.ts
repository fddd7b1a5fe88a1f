// The reference order store: the OrderStore interface on the package's own order tables.
import type { AddressValues, DataLayer } from '../db/data-layer.js'
import type { OrderStore, OrderSummary, PostalAddress, ShipNotificationChange, ShipNotificationResult } from '../order-store.js'

export class UnknownOrderStatusError extends Error {
  constructor(readonly statusHandle: string) {
    super(`Order status "${statusHandle}" does not exist.`)
    this.name = 'UnknownOrderStatusError'
  }
}

/**
 * A custom field of the reference store's orders (its field layout). Values live in the order's
 * `fields` JSON column under the handle; a `matrix` field holds blocks of sub-field values (the
 * tracking entry of a shipping notification is one such block).
 */
export interface OrderFieldDefinition {
  handle: string
  type: 'text' | 'dropdown' | 'matrix'
  /** The choices of a dropdown (the store field of ShipStation's export). */
  options?: string[] | undefined
  /** The sub-field handles of a matrix field's blocks. */
  subFields?: string[] | undefined
}

export interface ReferenceOrderStoreOptions {
  /** The custom fields orders carry. Default none. */
  orderFields?: OrderFieldDefinition[] | undefined
}

/** A stored shipping address as a postal address, or null when it lacks a street, city, postal code or country. */
function postalAddress(address: AddressValues | undefined): PostalAddress | null {
  if (!address?.address1 || !address.city || !address.postalCode || !address.countryCode) return null
  return {
    name: address.fullName,
    company: address.company,
    street1: address.address1,
    street2: address.address2,
    city: address.city,
    state: address.state,
    postalCode: address.postalCode,
    country: address.countryCode,
    phone: address.phone,
    email: address.email,
  }
}

/** The reference store on a data layer; hosts get it as `app.shipments.orders` when they bring no order store. */
export function createReferenceOrderStore(data: DataLayer, options: ReferenceOrderStoreOptions = {}): OrderStore {
  const fieldsByHandle = new Map((options.orderFields ?? []).map((field) => [field.handle, field]))

  /** The order's fields with the notification's tracking entry in place, and why it was skipped, if it was. */
  function withTrackingEntry(fields: Record<string, unknown>, tracking: ShipNotificationChange['tracking']) {
    if (!tracking) return { fields, trackingSkipped: null }
    const field = fieldsByHandle.get(tracking.fieldHandle)
    if (field?.type !== 'matrix') {
      return { fields, trackingSkipped: `the order field "${tracking.fieldHandle}" does not exist or is not a matrix field` }
    }
    const subFields = new Set(field.subFields ?? [])
    const missing = Object.keys(tracking.values).filter((handle) => !subFields.has(handle))
    const trackingSkipped = missing.length > 0 ? `the matrix field "${field.handle}" has no sub-field ${missing.map((handle) => `"${handle}"`).join(', ')}` : null
    const block = Object.fromEntries(Object.entries(tracking.values).filter(([handle]) => subFields.has(handle)))
    // One tracking entry per order: a later notification replaces the block, never appends one.
    if (Object.values(block).some((value) => value !== '')) return { fields: { ...fields, [field.handle]: [block] }, trackingSkipped }
    return { fields, trackingSkipped }
  }

  return {
    async findOrder(orderId): Promise<OrderSummary | null> {
      const order = await data.findOrder(orderId)
      if (!order) return null
      const shippingAddress = postalAddress(await data.parcels.orderShippingAddress(orderId))
      return shippingAddress ? { ...order, shippingAddress } : order
    },

    async findOrders(orderIds): Promise<OrderSummary[]> {
      return data.findOrders(orderIds)
    },

    async findOrderByReference(reference): Promise<OrderSummary | null> {
      return (await data.findOrderByReference(reference)) ?? null
    },

    orderStatusExists: (statusHandle) => data.orderStatusExists(statusHandle),

    async orderLines(orderId) {
      const lines = (Number.isSafeInteger(orderId) ? await data.orderLines(orderId) : undefined) ?? null
      // A line's option named "location" is where its goods are kept: the pick list's order.
      return lines && lines.map((line) => (typeof line.attributes?.location === 'string' ? { ...line, location: line.attributes.location } : line))
    },

    listCompletedOrders: (query) => data.listCompletedOrders(query),

    async setOrderStatus(orderId, statusHandle) {
      if (!(await data.setOrderStatus(orderId, statusHandle))) throw new UnknownOrderStatusError(statusHandle)
    },

    exportOrders: (query) => data.exportOrders(query),

    async recordShipNotification(orderId, change): Promise<ShipNotificationResult> {
      // An unchanged order is not saved, so a repeated notification leaves dateUpdated (and the export) alone.
      const result = await data.updateNotifiedOrder(orderId, change.statusHandle, (order) => withTrackingEntry(order.fields, change.tracking))
      if (result === 'no-status') throw new UnknownOrderStatusError(change.statusHandle)
      if (result === 'no-order') throw new Error(`Order ${orderId} does not exist.`)
      return { changed: result.changed, trackingSkipped: result.outcome.trackingSkipped }
    },
  }
}
