// Typed events, emitted after the database commit, never inside it.
import { EventEmitter } from 'node:events'
import type { FastifyBaseLogger } from 'fastify'
import type { Shipment, ShipmentStatus } from './shipments/shipment.js'

/** Who or what caused a change: a user, an integration, or both. */
export interface ChangeSource {
  userId: string | null
  sourceIntegration: string | null
  externalCode: string | null
}

export interface ShipmentCreatedEvent extends ChangeSource {
  shipment: Shipment
}

export interface ShipmentStatusChangedEvent extends ChangeSource {
  shipment: Shipment
  from: ShipmentStatus
  to: ShipmentStatus
  message: string | null
  historyId: number
}

export interface OrderAdvancedEvent {
  orderId: number
  /** The order status applied. */
  status: string
  /** The shipment whose transition completed the order. */
  shipmentId: number
}

export interface ShipNotificationRecordedEvent {
  orderId: number
  orderReference: string
  /** The order status applied (the Status Handle setting). */
  status: string
  /** The tracking values of the notification, or null when it carried none. */
  tracking: { carrier: string; service: string; trackingNumber: string } | null
  /** The shipments moved to shipped by it (only with `updateShipments`). */
  shipmentIds: number[]
}

export interface ShipmentDeletedEvent {
  shipment: Shipment
}

/** Event name to payload. Listen with `app.shipments.events.on(name, listener)`. */
export interface ShipmentsEventMap {
  shipmentCreated: [ShipmentCreatedEvent]
  shipmentStatusChanged: [ShipmentStatusChangedEvent]
  shipmentDeleted: [ShipmentDeletedEvent]
  shipmentRestored: [ShipmentDeletedEvent]
  orderAdvanced: [OrderAdvancedEvent]
  /** A ShipStation ship notification changed an order (a repeated one that changes nothing fires none). */
  shipNotificationRecorded: [ShipNotificationRecordedEvent]
}

export class ShipmentsEvents extends EventEmitter<ShipmentsEventMap> {
  constructor(private readonly logger: FastifyBaseLogger) {
    super()
  }

  /**
   * Emits after a commit. Every listener is called, in registration order, each on its own: one that
   * throws, or an async one whose promise rejects, is logged with the event's name and never stops the
   * others, undoes the committed change, fails the caller or takes the host down.
   */
  emitCommitted<Name extends keyof ShipmentsEventMap>(name: Name, ...payload: ShipmentsEventMap[Name]): void {
    const logFailure = (error: unknown) => this.logger.error({ err: error, event: name }, `A shipments event listener failed (${name})`)
    // rawListeners keeps `once` wrappers, so a one-time listener still removes itself when called.
    for (const listener of this.rawListeners(name) as Array<(...args: ShipmentsEventMap[Name]) => unknown>) {
      try {
        const result = listener.apply(this, payload)
        if (typeof (result as PromiseLike<unknown> | null)?.then === 'function') Promise.resolve(result).catch(logFailure)
      } catch (error) {
        logFailure(error)
      }
    }
  }
}
