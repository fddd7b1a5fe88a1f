// Typed events: written to the outbox with the change that causes them, delivered after the commit.
import { EventEmitter } from 'node:events'
import type { FastifyBaseLogger } from 'fastify'
import type { Parcel } from './parcel.js'
import type { Return } from './return.js'
import type { Shipment, ShipmentStatus } from './shipment.js'
import type { CarrierMilestone, Checkpoint } from './checkpoints.js'

/** Who or what caused a change: a user, an integration, or both. */
export interface ChangeSource {
  userId: string | null
  sourceIntegration: string | null
  externalCode: string | null
}

/** Every event carries the id of its outbox message: a listener called twice for one event (at least once) sees the same id. */
export interface EventIdentity {
  eventId: string
}

export interface ShipmentCreatedEvent extends ChangeSource, EventIdentity {
  shipment: Shipment
}

export interface ShipmentStatusChangedEvent extends ChangeSource, EventIdentity {
  shipment: Shipment
  from: ShipmentStatus
  to: ShipmentStatus
  message: string | null
  historyId: number
}

export interface OrderAdvancedEvent extends EventIdentity {
  orderId: number
  /** The order status applied. */
  status: string
  /** The shipment whose transition completed the order. */
  shipmentId: number
}

export interface ShipNotificationRecordedEvent extends EventIdentity {
  orderId: number
  orderReference: string
  /** The order status applied (the Status Handle setting). */
  status: string
  /** The tracking values of the notification, or null when it carried none. */
  tracking: { carrier: string; service: string; trackingNumber: string } | null
  /** The shipments moved to shipped by it (only with `updateShipments`). */
  shipmentIds: number[]
  /**
   * A notification whose items named lines of the order (with `updateShipments`): the lines and units it
   * shipped, the units it named but did not ship, and whether the order is now shipped in full (only
   * then did the order move to `status`). Absent for a notification applied to the whole order.
   */
  items?: {
    shipped: Array<{ lineItemId: number; quantity: number }>
    notShipped: Array<{ lineItemId: number | null; sku: string | null; quantity: number; reason: 'nothing-left' | 'no-such-line' }>
    orderComplete: boolean
  } | undefined
}

export interface ShipmentDeletedEvent extends EventIdentity {
  shipment: Shipment
}

/** A parcel added, changed or removed: the parcel, and every parcel of its shipment after the change. */
export interface ParcelEvent extends EventIdentity {
  shipmentId: number
  parcel: Parcel
  parcels: Parcel[]
  userId: string | null
}

/** A label bought (the parcel carries its tracking number, carrier, label and cost) or voided. */
export interface LabelEvent extends ParcelEvent {
  /** The label operation: our stable id of the purchase, and the provider's own id of it. */
  operationId: string
  externalId: string | null
  integration: string
  /** labelVoided: the provider's refund status (EasyPost: submitted, refunded, ...). */
  refundStatus?: string | undefined
}

/** A manifest made: the manifest as the API shows it, and each label in it. */
export interface ManifestCreatedEvent extends EventIdentity {
  manifest: {
    id: number
    integration: string
    carrier: string
    shipFrom: string
    externalId: string | null
    parcelCount: number
    dateCreated: string
  }
  labels: Array<{ shipmentId: number; parcelId: number; trackingNumber: string }>
  userId: string | null
}

/**
 * A return's change: the return after it (for returnReceived, its lines carry what arrived by condition:
 * what the host restocks and refunds from), the states before and after, who changed it and through what.
 */
export interface ReturnEvent extends EventIdentity {
  return: Return
  /** null for returnRequested. */
  from: string | null
  to: string
  message: string | null
  userId: string | null
  /** `api`, `admin`, or what the host passed as the source of the change. */
  source: string
}

/** The carrier's delivery estimate of a shipment changed (a tracking service's event said so). */
export interface EstimateChangedEvent extends EventIdentity {
  shipment: Shipment
  /** The estimate before, or null when there was none. */
  from: string | null
  to: string | null
  /** The integration (handle) that sent it. */
  source: string | null
  /** True when the new estimate is later than the one before (a delay). */
  movedLater: boolean
}

/** A new carrier scan reached a milestone (out for delivery, attempted, exception, delivered, returned to sender). */
export interface CarrierMilestoneEvent extends EventIdentity {
  shipment: Shipment
  milestone: CarrierMilestone
  /** The scan that reached it. */
  checkpoint: Checkpoint
}

/**
 * A label batch finished: every item is final (bought, failed, skipped or cancelled). Written with the
 * batch's end in one transaction; a batch retried and finished again sends it again (a new eventId).
 */
export interface BatchCompletedEvent extends EventIdentity {
  batchId: number
  /** The batch's items by state. */
  counts: { queued: number; bought: number; failed: number; skipped: number; cancelled: number }
  /** The parcels whose purchase failed, in pick order, with the carrier's words. */
  failed: Array<{ shipmentId: number; parcelId: number | null; reason: string | null }>
  /** Who created the batch. */
  userId: string | null
  /** When it finished, in the site's timezone. */
  finishedAt: string
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
  parcelAdded: [ParcelEvent]
  parcelChanged: [ParcelEvent]
  parcelRemoved: [ParcelEvent]
  /** A label bought for a parcel, written with the purchase in one transaction. */
  labelPurchased: [LabelEvent]
  /** A label voided (refund asked of the carrier); the parcel's tracking number is free again. */
  labelVoided: [LabelEvent]
  /** A return requested (its lines checked against what shipped). */
  returnRequested: [ReturnEvent]
  returnAuthorised: [ReturnEvent]
  /** A return rejected; `message` is the reason given. */
  returnRejected: [ReturnEvent]
  /** A return label bought for an authorised return: the return carries its tracking number and label URL. */
  returnLabelSent: [ReturnEvent]
  /** An unused return label voided (refund asked of the carrier); `message` holds the refund's status. */
  returnLabelVoided: [ReturnEvent]
  /** What arrived of a return, line by line with its condition: the host restocks and refunds from it. */
  returnReceived: [ReturnEvent]
  returnClosed: [ReturnEvent]
  /** A tracking service moved a shipment's delivery estimate. */
  estimateChanged: [EstimateChangedEvent]
  /** A new carrier scan is a milestone; notifications can be sent on it. */
  carrierMilestone: [CarrierMilestoneEvent]
  /** The day's manifest made by the carrier (USPS's SCAN form through EasyPost): its labels, and who asked. */
  manifestCreated: [ManifestCreatedEvent]
  /** A label batch finished: its counts and the parcels that failed, with the carrier's words. */
  batchCompleted: [BatchCompletedEvent]
}

export class ShipmentsEvents extends EventEmitter<ShipmentsEventMap> {
  constructor(private readonly logger: FastifyBaseLogger) {
    super()
  }

  /**
   * Delivers a committed event (the outbox calls it). Every listener is called at once, in registration
   * order, each on its own: one that throws, or an async one whose promise rejects, is logged with the
   * event's name and never stops the others, undoes the committed change, fails the caller or takes the
   * host down. `settled` settles (never rejects) when every async listener has settled: only then is the
   * event marked delivered, so one interrupted by a crash is delivered again. `unsettled()` counts the
   * async listeners still running: the outbox gives them a deadline and names that count in its warning
   * when they miss it.
   */
  deliverCommitted<Name extends keyof ShipmentsEventMap>(name: Name, ...payload: ShipmentsEventMap[Name]): { settled: Promise<void>; unsettled(): number } {
    const logFailure = (error: unknown) => this.logger.error({ err: error, event: name }, `A shipments event listener failed (${name})`)
    const pending: Promise<unknown>[] = []
    let unsettled = 0
    // rawListeners keeps `once` wrappers, so a one-time listener still removes itself when called.
    for (const listener of this.rawListeners(name) as Array<(...args: ShipmentsEventMap[Name]) => unknown>) {
      try {
        const result = listener.apply(this, payload)
        if (typeof (result as PromiseLike<unknown> | null)?.then === 'function') {
          unsettled++
          pending.push(Promise.resolve(result).catch(logFailure).finally(() => unsettled--))
        }
      } catch (error) {
        logFailure(error)
      }
    }
    return { settled: pending.length === 0 ? Promise.resolve() : Promise.all(pending).then(() => undefined), unsettled: () => unsettled }
  }
}
