// What a caller hands the update path beside the input (who changes it, an integration's event, a
// webhook delivery, the carrier's scans, the coverage rule) and what the update answers.
import type { Shipment, ShipmentStatus } from '../model/shipment.js'
import type { ScansToKeep } from './service-context.js'

export interface UpdateContext {
  /** The user making the change, recorded on the history row. */
  userId?: string | null | undefined
  /**
   * Called under the shipment's mutex (its in-process queue; no database lock is held) when the status
   * really changes, with the status read then, and again if another process moves the shipment before
   * the write; throw to refuse the transition (the API checks the transition permission here).
   */
  authorizeTransition?: ((from: ShipmentStatus, to: ShipmentStatus) => void | Promise<void>) | undefined
  /**
   * The update is an integration's event: it is applied under the shipment's lock, and only when it
   * is not older than the last event applied from that integration, so late deliveries never move a
   * shipment back.
   */
  externalEvent?: ExternalEvent | undefined
  /**
   * The update is a webhook delivery with this id: it is recorded in the integration's dedupe ledger in
   * the update's own transaction, so a crash never keeps the mark without its effect, and a delivery
   * recorded before changes nothing (`duplicate` in the result).
   */
  delivery?: { integrationId: number; deliveryId: string } | undefined
  /**
   * A move to shipped advances the order only when the shipped shipments hold every shippable line in
   * full, as under `requireFullCoverage`: a ShipStation notification for part of an order ships its
   * shipment without completing the order.
   */
  requireFullCoverage?: boolean | undefined
  /**
   * The carrier's scans the integration's event reported: kept (those not kept yet) in the update's
   * transaction, also when the event is stale, with the `carrierMilestone` of the newest new milestone.
   * A refused update keeps none of them.
   */
  checkpoints?: ScansToKeep | undefined
}

export interface ExternalEvent {
  integrationId: number
  occurredAt: Date
  /** The shipment's id and page at the integration, kept as its external reference. */
  externalId?: string | null | undefined
  /** The shipment's page at the integration; it also fills the shipment's `trackingUrl` when that is empty. */
  externalUrl?: string | null | undefined
  /**
   * The carrier's time of the event's first scan that means shipped: the shipment's `dateShipped` when
   * this event ships it (the time the event arrived otherwise).
   */
  shippedAt?: Date | undefined
  /** The delivery date the carrier now expects, as sent; undefined leaves the shipment's estimate as it is. */
  estimatedDelivery?: string | undefined
}

export interface UpdateResult {
  shipment: Shipment
  /** The transition applied, or null when the status did not change. */
  transition: { from: ShipmentStatus; to: ShipmentStatus; historyId: number } | null
  /** True when an external event was older than the last one applied, and so changed nothing. */
  stale: boolean
  /** True when the delivery (`UpdateContext.delivery`) was recorded before, and so changed nothing. */
  duplicate: boolean
}
