// What the built-in tracking providers (EasyPost, AfterShip) share: the signature comparison, reading
// their JSON payloads, finding the shipment an event is about, applying it once and in order, and
// calling the service's API.
import { timingSafeEqual } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { IntegrationError } from '../../errors.js'
import { parseIsoDateTime } from '../../time.js'
import { TEXT_LIMITS, textProblem } from '../../text.js'
import type { CheckpointInput } from '../../model/checkpoints.js'
import type { Shipment } from '../../model/shipment.js'
import { refuseFutureEvent } from '../../shipments/updates.js'
import type { GatewayResponse, ProviderContext } from '../providers.js'

/** How long one call to a service's API may take. */
export const SERVICE_CALL_TIMEOUT_MS = 10_000

/**
 * An API base URL: https, or plain http on a loopback address only (a local fake or proxy), so an API
 * key never crosses a network in clear text.
 */
export const API_BASE_URL_PATTERN = '^(https://[^\\s/?#]+|http://(127\\.0\\.0\\.1|localhost|\\[::1\\])(:\\d+)?)(/[^\\s?#]*)?$'

export const headerValue = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name]
  return typeof value === 'string' ? value : undefined
}

/** Whether a presented signature equals the expected one, compared in constant time. */
export function signaturesEqual(presented: string, expected: string): boolean {
  const candidate = Buffer.from(presented, 'utf8')
  const wanted = Buffer.from(expected, 'utf8')
  return candidate.length === wanted.length && timingSafeEqual(candidate, wanted)
}

const refused = (detail: string) => new IntegrationError(`Invalid webhook payload: ${detail}`)

/** The body as a JSON object; a 400 otherwise. */
export function jsonObject(rawBody: Buffer): Record<string, unknown> {
  let payload: unknown
  try {
    payload = JSON.parse(rawBody.toString('utf8'))
  } catch {
    throw refused('the body is not JSON.')
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw refused('the body must be a JSON object.')
  return payload as Record<string, unknown>
}

/** A member that must be a JSON object. */
export function objectAt(record: Record<string, unknown>, key: string, path: string): Record<string, unknown> {
  const value = record[key]
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw refused(`${path} must be an object.`)
  return value as Record<string, unknown>
}

/** An optional text member, held to the rule of the short texts the package stores. */
export function textAt(record: Record<string, unknown>, key: string, path: string): string | undefined {
  const value = record[key]
  if (value === undefined || value === null || value === '') return undefined
  if (typeof value !== 'string') throw refused(`${path} must be a string.`)
  const problem = textProblem(value, { maxLength: TEXT_LIMITS.short })
  if (problem) throw refused(`${path} ${problem}`)
  return value
}

export function requiredTextAt(record: Record<string, unknown>, key: string, path: string): string {
  const value = textAt(record, key, path)
  if (value === undefined) throw refused(`${path} is required.`)
  return value
}

/**
 * A tracking page to keep as the shipment's external URL: an http(s) URL within the limit, or nothing.
 * A missing or odd URL is no reason to refuse the status it came with.
 */
export function trackingPageAt(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key]
  if (typeof value !== 'string' || textProblem(value, { maxLength: TEXT_LIMITS.url }) || !URL.canParse(value)) return undefined
  return /^https?:$/.test(new URL(value).protocol) ? value : undefined
}

/** At most this many checkpoints are taken from one event (the newest): a tracker's whole life fits. */
export const MAX_CHECKPOINTS_PER_EVENT = 200

/** A text a service sent that the package may keep, or nothing: an odd value is no reason to refuse the event. */
export function keptText(value: unknown, maxLength: number = TEXT_LIMITS.short): string | undefined {
  if (typeof value !== 'string') return undefined
  const trimmed = value.trim()
  return trimmed === '' || textProblem(trimmed, { maxLength }) ? undefined : trimmed
}

/** A delivery estimate as sent (a date, or a date-time), or nothing when it reads as neither. */
export function estimateText(value: unknown): string | undefined {
  const text = keptText(value)
  return text !== undefined && parseIsoDateTime(text, 'UTC') !== null ? text : undefined
}

/** "SAN FRANCISCO, CA, 94107, US" from the parts a service gives (empty ones left out). */
export function joinedPlace(parts: unknown[]): string | undefined {
  return keptText(parts.map((part) => keptText(part)).filter((part) => part !== undefined).join(', ') || undefined, TEXT_LIMITS.statusMessage)
}

/**
 * One checkpoint of a service's event, or null when its time is missing or not a date-time (skipped,
 * never a reason to refuse the event). A time without an offset is read as UTC for the order only;
 * the text is kept as sent.
 */
export function checkpointOf(time: unknown, fields: Omit<CheckpointInput, 'occurredAt' | 'occurredAtText'>): CheckpointInput | null {
  const text = keptText(time)
  const instant = text === undefined ? null : parseIsoDateTime(text, 'UTC')
  if (instant === null) return null
  return { ...fields, occurredAt: new Date(instant), occurredAtText: text! }
}

/** A service's checkpoints array, the newest MAX_CHECKPOINTS_PER_EVENT that read as checkpoints. */
export function checkpointsOf(value: unknown, read: (entry: Record<string, unknown>) => CheckpointInput | null): CheckpointInput[] {
  if (!Array.isArray(value)) return []
  const kept: CheckpointInput[] = []
  for (const entry of value) {
    const checkpoint = typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? read(entry as Record<string, unknown>) : null
    if (checkpoint) kept.push(checkpoint)
  }
  kept.sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime())
  return kept.slice(-MAX_CHECKPOINTS_PER_EVENT)
}

/** A tracking event as both services describe one, in the gateway's terms. */
export interface TrackingEvent {
  /** The service's id of the event: the dedupe key. */
  deliveryId: string
  /** The service's status code, translated by the integration's status map. */
  code: string
  /**
   * When the service sent the event. The event's time for the stale-event guard is the carrier's time of
   * its newest checkpoint when it has one not later than this, else this.
   */
  occurredAt: Date
  /** The carrier's scans the event lists (kept per shipment, once each). */
  checkpoints?: CheckpointInput[] | undefined
  /** The delivery date the carrier expects, as sent; undefined when the event gives none. */
  estimatedDelivery?: string | undefined
  trackingNumber: string
  /** The carrier as the service names it; tells apart shipments that share a tracking number. */
  carrier?: string
  /** The tracker's id at the service, kept as the shipment's external id (and matched when the number is not). */
  externalId?: string
  /** The public tracking page, kept as the shipment's external URL. */
  externalUrl?: string
}

/** "DHL Express", "DHLExpress" and "dhl-express" are one carrier. */
const carrierKey = (carrier: string | null | undefined) => (carrier ?? '').toLowerCase().replace(/[^a-z0-9]/g, '')

type Match = { shipment: Shipment } | { reason: 'unmatched' | 'ambiguous'; count: number }

/**
 * The shipment with the event's tracking number; among several, the one of the event's carrier; failing
 * that (no shipment has the number, or several still do), the one whose external reference at this
 * integration is the event's tracker.
 */
async function findShipment(event: TrackingEvent, context: ProviderContext): Promise<Match> {
  let candidates = (await context.shipments.list({ trackingNumber: event.trackingNumber, perPage: 100 })).shipments
  if (candidates.length > 1 && event.carrier) {
    const sameCarrier = candidates.filter((shipment) => carrierKey(shipment.carrier) === carrierKey(event.carrier))
    if (sameCarrier.length > 0) candidates = sameCarrier
  }
  if (candidates.length === 1) return { shipment: candidates[0] }
  if (event.externalId) {
    const externalReference = { integrationId: context.integration.id, externalId: event.externalId }
    const byReference = (await context.shipments.list({ externalReference, perPage: 100 })).shipments
    const named = candidates.length === 0 ? byReference : candidates.filter((shipment) => byReference.some((other) => other.id === shipment.id))
    if (named.length === 1) return { shipment: named[0] }
    if (candidates.length === 0 && named.length > 1) return { reason: 'ambiguous', count: named.length }
  }
  return candidates.length === 0 ? { reason: 'unmatched', count: 0 } : { reason: 'ambiguous', count: candidates.length }
}

/**
 * A delivery that changes no shipment, remembered with why (the integration's page lists it) and
 * answered 200: the service would only retry it, and an endpoint that keeps failing gets disabled.
 */
export async function unapplied(context: ProviderContext, event: TrackingEvent, outcome: string, reason: string, details: Record<string, unknown>): Promise<GatewayResponse> {
  context.logger.warn({ deliveryId: event.deliveryId, externalCode: event.code, trackingNumber: event.trackingNumber, outcome }, 'Tracking event changed nothing')
  const recorded = await context.deliveries.record(event.deliveryId, { outcome, reason })
  if (!recorded) return { body: { success: true, applied: false, reason: 'duplicate', deliveryId: event.deliveryId } }
  return { body: { success: true, applied: false, reason: outcome, ...details, deliveryId: event.deliveryId } }
}

/**
 * The event's time for the stale-event guard: the carrier's time of its newest scan, when it has one
 * not later than the time the service sent it (a scan time without an offset may read hours ahead),
 * else the sending time.
 */
function eventTime(event: TrackingEvent): Date {
  const newest = event.checkpoints?.at(-1)?.occurredAt
  return newest && newest <= event.occurredAt ? newest : event.occurredAt
}

/** The carrier's time of the event's first scan whose status the integration maps to shipped. */
function shippedAt(event: TrackingEvent, statusMap: Readonly<Record<string, string>>, until: Date): Date | undefined {
  const first = event.checkpoints?.find((checkpoint) => checkpoint.status !== undefined && Object.hasOwn(statusMap, checkpoint.status) && statusMap[checkpoint.status] === 'shipped')
  return first && first.occurredAt <= until ? first.occurredAt : undefined
}

/** The event's checkpoints as the shipment keeps them (on its parcel, when the number is a parcel's). */
const scansOf = (event: TrackingEvent, context: ProviderContext, parcelId: number | null) => ({
  trackingNumber: event.trackingNumber,
  source: context.integration.handle,
  parcelId,
  checkpoints: event.checkpoints ?? [],
})

/** Keeps the checkpoints of an event that changes no shipment (idempotent: a repeat adds none). */
async function keepCheckpoints(event: TrackingEvent, context: ProviderContext, shipmentId: number, parcelId: number | null) {
  if (!event.checkpoints?.length) return
  await context.shipments.recordCheckpoints(shipmentId, scansOf(event, context, parcelId))
}

/** Applies a verified tracking event: at most once per event id, never over a later event. */
export async function applyTrackingEvent(event: TrackingEvent, context: ProviderContext): Promise<GatewayResponse> {
  const { integration } = context
  const status = integration.statusMap[event.code]
  let match = await findShipment(event, context)
  if (!status) {
    // Its scans still tell where the parcel is.
    if ('shipment' in match) await keepCheckpoints(event, context, match.shipment.id, null)
    return unapplied(context, event, 'unmapped-status', `Unmapped status ${event.code}`, { externalCode: event.code })
  }
  const occurredAt = eventTime(event)
  // Refused before anything is written (a return, a parcel, a scan): a refused event changes nothing.
  refuseFutureEvent(occurredAt, context.now())
  // A return's tracking number names the return (its own label, or one entered by hand), not a shipment.
  const returned = context.parcels?.trackReturn ? await context.parcels.trackReturn({ trackingNumber: event.trackingNumber, status, code: event.code, integration: integration.handle }) : null
  if (returned) {
    const recorded = await context.deliveries.record(event.deliveryId, { outcome: 'return', reason: `Return ${returned.returnId} is ${returned.state}` })
    if (!recorded) return { body: { success: true, applied: false, reason: 'duplicate', deliveryId: event.deliveryId } }
    return { body: { success: true, applied: true, deliveryId: event.deliveryId, return: { id: returned.returnId, state: returned.state } } }
  }
  // A parcel holding the number moves first (forward only, so a repeat or a late event changes nothing).
  const parcel = context.parcels ? await context.parcels.track({ trackingNumber: event.trackingNumber, status, code: event.code, integration: integration.handle }) : null
  if (parcel) {
    // A shipment with parcels is shipped once every parcel is out; until then the event moves the parcel only.
    if (status === 'shipped' && !parcel.everyParcelShipped) {
      await keepCheckpoints(event, context, parcel.shipmentId, parcel.parcelId)
      const recorded = await context.deliveries.record(event.deliveryId, { outcome: 'parcel', reason: `Parcel ${parcel.parcelId} is ${parcel.parcelStatus}; other parcels of its shipment are not out yet` })
      if (!recorded) return { body: { success: true, applied: false, reason: 'duplicate', deliveryId: event.deliveryId } }
      return { body: { success: true, applied: true, deliveryId: event.deliveryId, parcel: { id: parcel.parcelId, status: parcel.parcelStatus } } }
    }
    const shipment = 'shipment' in match ? null : await context.shipments.get(parcel.shipmentId)
    if (shipment) match = { shipment }
  }
  if (!('shipment' in match)) {
    const reason =
      match.reason === 'unmatched'
        ? `No shipment has tracking number ${event.trackingNumber}`
        : `${match.count} shipments match tracking number ${event.trackingNumber}`
    return unapplied(context, event, match.reason, reason, { trackingNumber: event.trackingNumber })
  }
  const { shipment } = match
  // The scans belong to the parcel's shipment; another shipment named by the same number keeps none of them.
  const scansOnShipment = !parcel || parcel.shipmentId === shipment.id
  if (!scansOnShipment) await keepCheckpoints(event, context, parcel.shipmentId, parcel.parcelId)
  // The ledger mark and the scans commit with the update (or not at all), as for the signed-webhook provider.
  const result = await context.shipments.update(
    shipment.id,
    { status, integrationHandle: integration.handle, externalCode: event.code },
    {
      externalEvent: {
        integrationId: integration.id,
        occurredAt,
        externalId: event.externalId,
        externalUrl: event.externalUrl,
        shippedAt: shippedAt(event, integration.statusMap, occurredAt),
        estimatedDelivery: event.estimatedDelivery,
      },
      delivery: { integrationId: integration.id, deliveryId: event.deliveryId },
      checkpoints: scansOnShipment ? scansOf(event, context, parcel?.parcelId ?? null) : undefined,
    },
  )
  if (result.duplicate) return { body: { success: true, applied: false, reason: 'duplicate', deliveryId: event.deliveryId } }
  const summary = { id: shipment.id, reference: shipment.reference, status: result.shipment.status }
  if (result.stale) return { body: { success: true, applied: false, reason: 'stale-event', deliveryId: event.deliveryId, shipment: summary } }
  return { body: { success: true, applied: true, deliveryId: event.deliveryId, shipment: summary } }
}

/** An event of a kind the provider does not handle: answered 200 so the service does not retry it, not recorded. */
export const ignoredEvent = (kind: string, deliveryId: string): GatewayResponse => ({
  body: { success: true, applied: false, reason: 'ignored-event', event: kind, deliveryId },
})

export interface ServiceAnswer {
  status: number
  /** The JSON body, or null when there was none or it was not JSON. */
  body: unknown
}

/** `https://api.example.com/v2/` + `trackers` without a doubled or lost slash. */
export const serviceUrl = (base: string, path: string) => `${base.replace(/\/+$/, '')}/${path}`

/**
 * One call to a service's API, with a deadline. Not reaching it (a network failure, the deadline) is a
 * retryable IntegrationError; the message never carries the request's headers (the API key).
 */
export async function callService(service: string, url: string, init: RequestInit): Promise<ServiceAnswer> {
  let response: Response
  try {
    response = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(SERVICE_CALL_TIMEOUT_MS) })
  } catch (error) {
    // fetch says "fetch failed" and its cause says why (ECONNREFUSED, ENOTFOUND, "bad port"); the
    // deadline's error has no cause and says it timed out.
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause
    const why = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : (error as Error).message
    throw new IntegrationError(`${service} could not be reached: ${why}.`, { retryable: true, cause: error })
  }
  const text = await response.text()
  let body: unknown = null
  try {
    body = text === '' ? null : JSON.parse(text)
  } catch {
    // Not JSON (a proxy's error page, say): the status says enough.
  }
  return { status: response.status, body }
}

/** A refusal by the service: retryable when it is busy (429) or failing (5xx); with its own message, shortened. */
export function serviceRefusal(service: string, action: string, answer: ServiceAnswer, message: unknown): IntegrationError {
  const detail = typeof message === 'string' && message !== '' ? `: ${message.slice(0, 200)}` : '.'
  return new IntegrationError(`${service} refused to ${action} (${answer.status})${detail}`, { retryable: answer.status === 429 || answer.status >= 500 })
}

/** The connection check of a service: an authenticated GET that must succeed. */
export async function checkServiceKey(service: string, url: string, headers: Record<string, string>) {
  try {
    const answer = await callService(service, url, { method: 'GET', headers: { accept: 'application/json', ...headers } })
    if (answer.status >= 200 && answer.status < 300) return { ok: true, message: `${service} accepted the API key.` }
    if (answer.status === 401 || answer.status === 403) return { ok: false, message: `${service} refused the API key (${answer.status}).` }
    return { ok: false, message: `${service} answered ${answer.status}.` }
  } catch (error) {
    return { ok: false, message: (error as Error).message }
  }
}
