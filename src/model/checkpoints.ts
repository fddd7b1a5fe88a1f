// Carrier checkpoints as clients see them, and what a provider hands over to keep one.
import { createHash } from 'node:crypto'
import type { CheckpointRow, NewCheckpoint } from '../db/checkpoints.js'
import { trackingNumberKey } from '../text.js'
import { formatIsoWithOffset } from '../time.js'

/** One scan as a provider read it from a tracking service's event. */
export interface CheckpointInput {
  /** The carrier's time as an instant (for the order). */
  occurredAt: Date
  /** The carrier's time exactly as sent, with its offset when there was one. */
  occurredAtText: string
  message?: string | undefined
  location?: string | undefined
  status?: string | undefined
  subStatus?: string | undefined
  signedBy?: string | undefined
}

/** A carrier checkpoint of a shipment (or of one of its parcels). */
export interface Checkpoint {
  id: number
  shipmentId: number
  /** The parcel whose tracking number the scan was for; null for the shipment's own number. */
  parcelId: number | null
  trackingNumber: string
  /** The integration (handle) that reported it. */
  source: string
  /** The carrier's time as sent: the scan's local time, with its offset when the service gave one. */
  occurredAt: string
  /** The same instant in UTC (an offset-less time is read as UTC). */
  occurredAtUtc: string
  message: string | null
  location: string | null
  /** The service's status of the scan (EasyPost `status`, AfterShip `tag`, the signed webhook's `status`). */
  status: string | null
  /** The finer status (EasyPost `status_detail`, AfterShip `subtag`). */
  subStatus: string | null
  signedBy: string | null
  /** When the package first received it, in the site's time zone. */
  dateCreated: string
}

/**
 * The natural key of a scan: the same tracking number, carrier instant, status and message are one
 * checkpoint, however often an event repeats it (a location or detail filled in later changes nothing).
 */
export function checkpointKey(trackingNumber: string, checkpoint: CheckpointInput): string {
  const parts = [trackingNumberKey(trackingNumber), checkpoint.occurredAt.getTime(), checkpoint.status ?? '', checkpoint.message ?? '']
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url').slice(0, 32)
}

export function newCheckpointRow(shipmentId: number, parcelId: number | null, trackingNumber: string, source: string, checkpoint: CheckpointInput): NewCheckpoint {
  return {
    shipmentId,
    parcelId,
    trackingNumber,
    source,
    occurredAt: checkpoint.occurredAt,
    occurredAtText: checkpoint.occurredAtText,
    message: checkpoint.message ?? null,
    location: checkpoint.location ?? null,
    status: checkpoint.status ?? null,
    subStatus: checkpoint.subStatus ?? null,
    signedBy: checkpoint.signedBy ?? null,
    dedupeKey: checkpointKey(trackingNumber, checkpoint),
  }
}

export function toCheckpoint(row: CheckpointRow, timeZone: string): Checkpoint {
  return {
    id: row.id,
    shipmentId: row.shipmentId,
    parcelId: row.parcelId,
    trackingNumber: row.trackingNumber,
    source: row.source,
    occurredAt: row.occurredAtText,
    occurredAtUtc: row.occurredAt.toISOString(),
    message: row.message,
    location: row.location,
    status: row.status,
    subStatus: row.subStatus,
    signedBy: row.signedBy,
    dateCreated: formatIsoWithOffset(row.createdAt.getTime(), timeZone),
  }
}

/** What a carrier's scan can mean for a customer: the moments notifications can be sent on. */
export const CARRIER_MILESTONES = ['outForDelivery', 'attempted', 'exception', 'delivered', 'returnedToSender'] as const
export type CarrierMilestone = (typeof CARRIER_MILESTONES)[number]

/** The services' codes (EasyPost status and status_detail, AfterShip tag and subtag, a sender's own), lower case, letters only. */
const MILESTONE_CODES: Readonly<Record<string, CarrierMilestone>> = {
  outfordelivery: 'outForDelivery',
  attemptfail: 'attempted',
  attemptfailed: 'attempted',
  attempted: 'attempted',
  deliveryattempted: 'attempted',
  failedattempt: 'attempted',
  exception: 'exception',
  failure: 'exception',
  delivered: 'delivered',
  returntosender: 'returnedToSender',
  returnedtosender: 'returnedToSender',
}

/**
 * The milestone a scan reaches, or null: its sub-status first (AfterShip's `Exception_011`, say, is an
 * exception), then its status. `AttemptFail_001`, `out_for_delivery` and `OutForDelivery` read alike.
 */
export function milestoneOf(checkpoint: { status: string | null; subStatus: string | null }): CarrierMilestone | null {
  for (const code of [checkpoint.subStatus, checkpoint.status]) {
    const key = code?.toLowerCase().replace(/[^a-z]/g, '')
    if (key && Object.hasOwn(MILESTONE_CODES, key)) return MILESTONE_CODES[key]
  }
  return null
}
