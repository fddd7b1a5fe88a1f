// The seam through which the package reads and changes the host's orders.

/** What the shipment side needs to know of an order. */
export interface OrderSummary {
  id: number
  /** The human-readable reference (ShipStation's OrderNumber); shipment references are built on it. */
  reference: string
  statusHandle: string | null
  isCompleted: boolean
}

/**
 * Orders belong to the host. A host with its own order tables implements this interface; the package's
 * reference store (`createReferenceOrderStore`) implements it on the package's own tables.
 */
export interface OrderStore {
  /** The order with this id, or null. */
  findOrder(orderId: number): Promise<OrderSummary | null>
  /** The order with this reference (ShipStation's OrderNumber), or null. */
  findOrderByReference(reference: string): Promise<OrderSummary | null>
  /** Moves the order to the status with this handle; throws when the status does not exist. */
  setOrderStatus(orderId: number, statusHandle: string): Promise<void>
}
