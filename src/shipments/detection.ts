// Carrier detection in the update path: an update that brings a tracking number and leaves the carrier
// or the tracking URL out gets them from the number (see carriers.ts), without overwriting what a
// sender wrote.
import type { FillableColumns, ShipmentColumns, ShipmentRow } from '../db/data-layer.js'
import type { DetectedCarrier } from './carriers.js'
import type { ShipmentPatch } from './update-input.js'

type DetectCarrier = (trackingNumber: string) => DetectedCarrier | null

/** True when the update brings a tracking number and leaves the carrier or the tracking URL to detection. */
export function leavesToDetection(patch: ShipmentPatch): boolean {
  const { trackingNumber, carrier, trackingUrl } = patch.columns
  return Boolean(trackingNumber) && (carrier === undefined || trackingUrl === undefined)
}

/** What detection gives for the update's tracking number, for the columns the update leaves out. */
export function detectedCarrierFill(patch: ShipmentPatch, detectCarrier: DetectCarrier): FillableColumns {
  const { trackingNumber, carrier, trackingUrl } = patch.columns
  if (!leavesToDetection(patch)) return {}
  const detected = detectCarrier(trackingNumber!)
  if (!detected) return {}
  return {
    ...(carrier === undefined && { carrier: detected.carrier }),
    ...(trackingUrl === undefined && detected.trackingUrl !== null && { trackingUrl: detected.trackingUrl }),
  }
}

/**
 * The detected carrier and tracking URL, written where the stored value is empty, or, when the tracking
 * number changes, where the stored value is what detection gives for the old number (a link to the old
 * parcel; the package keeps no record of who wrote a value, so a sender's value equal to it counts as
 * detected): any other value stays. A detected URL of the old number with none for the new one goes.
 */
export function applyDetection(before: ShipmentRow, columns: ShipmentColumns, patch: ShipmentPatch, fillEmpty: FillableColumns, detectCarrier: DetectCarrier) {
  if (!leavesToDetection(patch)) return
  const numberChanged = before.trackingNumber !== null && before.trackingNumber !== patch.columns.trackingNumber
  const detectedBefore = numberChanged ? detectCarrier(before.trackingNumber!) : null
  for (const column of ['carrier', 'trackingUrl'] as const) {
    if (patch.columns[column] !== undefined) continue
    const detectedNow = fillEmpty[column] ?? null
    if (before[column] === null) {
      if (detectedNow !== null) columns[column] = detectedNow
    } else if (detectedBefore && before[column] === detectedBefore[column] && (detectedNow !== null || column === 'trackingUrl')) {
      columns[column] = detectedNow
    }
  }
}
