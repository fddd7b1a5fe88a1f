// The built-in provider: shipment events any sender can post, signed per Standard Webhooks.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import { IntegrationError } from '../../errors.js'
import { parseIsoDateTime } from '../../time.js'
import { TEXT_LIMITS, textProblem } from '../../text.js'
import { defineProvider, type ProviderContext } from '../providers.js'
import type { CheckpointInput } from '../../model/checkpoints.js'
import { signingKey, signWebhook } from '../../signing/standard-webhooks.js'

export { signingKey, signWebhook }

export const SIGNED_WEBHOOK_PROVIDER_ID = 'signed-webhook'

/** Base64 (padded or not) of at least 24 bytes: eight groups of four characters or more, after an optional "whsec_". */
const SECRET_PATTERN = '^(?:whsec_)?(?:[A-Za-z0-9+/]{4}){8,}(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$'

const SettingsSchema = Type.Object(
  {
    /**
     * The signing secret, base64, optionally prefixed "whsec_" (Standard Webhooks): at least 24 bytes
     * once decoded (32 base64 characters), so a typo or a password never becomes a weak key.
     */
    secret: Type.String({
      title: 'Signing secret',
      description: 'The secret the sender signs each delivery with (Standard Webhooks: "whsec_" and base64).',
      pattern: SECRET_PATTERN,
      errorMessage: 'must be base64 of at least 24 bytes (32 characters), optionally prefixed "whsec_", such as a Standard Webhooks secret',
    }),
    /** How far the webhook-timestamp may be from now. */
    toleranceSeconds: Type.Integer({
      minimum: 1,
      maximum: 3600,
      default: 300,
      title: 'Timestamp tolerance (seconds)',
      description: 'How far a delivery\'s webhook-timestamp may be from now; older or later deliveries are refused. Default 300.',
    }),
  },
  { additionalProperties: false },
)

/** The event body a sender posts. */
export interface ShipmentWebhookEvent {
  orderNumber: string
  shipmentNumber?: string | number | undefined
  status: string
  occurredAt: string
  trackingNumber?: string | undefined
  trackingUrl?: string | undefined
  carrier?: string | undefined
  service?: string | undefined
  /** The carrier's scans, kept on the shipment once each (at most 200 an event). */
  checkpoints?: ShipmentWebhookCheckpoint[] | undefined
  /** The delivery date the carrier expects: an ISO-8601 date or date-time. */
  estimatedDelivery?: string | undefined
}

/** One scan in a signed-webhook event. */
export interface ShipmentWebhookCheckpoint {
  /** The carrier's time, ISO-8601, with the scan's offset (`2026-11-20T09:12:00-05:00`); without one it is read as UTC. */
  occurredAt: string
  message?: string | undefined
  /** The place as people read it (`Memphis, TN, US`). */
  location?: string | undefined
  /** The sender's status code of the scan; a code the status map sends to `shipped` dates the shipment's `dateShipped`. */
  status?: string | undefined
  subStatus?: string | undefined
}

const MAX_WEBHOOK_CHECKPOINTS = 200

/** The payload's checkpoints, each checked; a malformed one refuses the delivery (the sender's own format). */
function parseCheckpoints(value: unknown): CheckpointInput[] | undefined {
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value) || value.length > MAX_WEBHOOK_CHECKPOINTS) throw new IntegrationError(`Invalid webhook payload: checkpoints must be an array of at most ${MAX_WEBHOOK_CHECKPOINTS} objects.`)
  return value
    .map((entry, index) => {
      const path = `checkpoints[${index}]`
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new IntegrationError(`Invalid webhook payload: ${path} must be an object.`)
      const record = entry as Record<string, unknown>
      const text = (key: string, maxLength: number) => {
        const found = optionalString(record[key], `${path}.${key}`)
        const problem = found === undefined ? null : textProblem(found, { maxLength })
        if (problem) throw new IntegrationError(`Invalid webhook payload: ${path}.${key} ${problem}`)
        return found === '' ? undefined : found
      }
      const occurredAtText = text('occurredAt', TEXT_LIMITS.short)
      const instant = occurredAtText === undefined ? null : parseIsoDateTime(occurredAtText, 'UTC')
      if (instant === null) throw new IntegrationError(`Invalid webhook payload: ${path}.occurredAt must be an ISO-8601 date-time.`)
      return {
        occurredAt: new Date(instant),
        occurredAtText: occurredAtText!,
        message: text('message', TEXT_LIMITS.statusMessage),
        location: text('location', TEXT_LIMITS.statusMessage),
        status: text('status', TEXT_LIMITS.short),
        subStatus: text('subStatus', TEXT_LIMITS.short),
      }
    })
    .sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime())
}

const header = (headers: Record<string, unknown>, name: string) => {
  const value = headers[name]
  return typeof value === 'string' ? value : undefined
}

/** Checks headers and signature; returns the delivery id. Every failure is an IntegrationError. */
function verifyDelivery(headers: Record<string, unknown>, rawBody: Buffer, secret: string, toleranceSeconds: number, now: number): string {
  const deliveryId = header(headers, 'webhook-id')
  const timestamp = header(headers, 'webhook-timestamp')
  const signatures = header(headers, 'webhook-signature')
  if (!deliveryId || !timestamp || !signatures) {
    throw new IntegrationError('Missing webhook-id, webhook-timestamp or webhook-signature header.')
  }
  // The delivery id is stored (the dedupe ledger): the text rule of every stored text.
  const idProblem = textProblem(deliveryId, { maxLength: TEXT_LIMITS.short })
  if (idProblem) throw new IntegrationError(`The webhook-id header ${idProblem}`)
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) {
    throw new IntegrationError('Webhook timestamp is outside the allowed tolerance.')
  }
  const expected = Buffer.from(signWebhook(secret, deliveryId, timestamp, rawBody).slice('v1,'.length), 'base64')
  // Several space-separated signatures are allowed while a secret rotates; any valid one will do.
  const matches = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2)
    if (version !== 'v1' || !signature) return false
    const candidate = Buffer.from(signature, 'base64')
    return candidate.length === expected.length && timingSafeEqual(candidate, expected)
  })
  if (!matches) throw new IntegrationError('Webhook signature mismatch.')
  return deliveryId
}

const optionalString = (value: unknown, key: string): string | undefined => {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw new IntegrationError(`Invalid webhook payload: ${key} must be a string.`)
  return value
}

function parseEvent(rawBody: Buffer): Omit<ShipmentWebhookEvent, 'checkpoints'> & { occurredAtMs: number; scans: CheckpointInput[] | undefined } {
  let payload: unknown
  try {
    payload = JSON.parse(rawBody.toString('utf8'))
  } catch {
    throw new IntegrationError('Invalid webhook payload: the body is not JSON.')
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new IntegrationError('Invalid webhook payload: the body must be a JSON object.')
  }
  const body = payload as Record<string, unknown>
  const orderNumber = optionalString(body.orderNumber, 'orderNumber')
  const status = optionalString(body.status, 'status')
  const occurredAt = optionalString(body.occurredAt, 'occurredAt')
  if (!orderNumber) throw new IntegrationError('Invalid webhook payload: orderNumber is required.')
  if (!status) throw new IntegrationError('Invalid webhook payload: status is required.')
  if (!occurredAt) throw new IntegrationError('Invalid webhook payload: occurredAt is required.')
  const occurredAtMs = parseIsoDateTime(occurredAt, 'UTC')
  if (occurredAtMs === null) throw new IntegrationError('Invalid webhook payload: occurredAt is not an ISO-8601 date-time.')
  const shipmentNumber = body.shipmentNumber
  if (shipmentNumber !== undefined && shipmentNumber !== null && typeof shipmentNumber !== 'string' && typeof shipmentNumber !== 'number') {
    throw new IntegrationError('Invalid webhook payload: shipmentNumber must be a string or a number.')
  }
  return {
    orderNumber,
    shipmentNumber: shipmentNumber ?? undefined,
    status,
    occurredAt,
    occurredAtMs,
    trackingNumber: optionalString(body.trackingNumber, 'trackingNumber'),
    trackingUrl: optionalString(body.trackingUrl, 'trackingUrl'),
    carrier: optionalString(body.carrier, 'carrier'),
    service: optionalString(body.service, 'service'),
    scans: parseCheckpoints(body.checkpoints),
    estimatedDelivery: parseEstimate(body.estimatedDelivery),
  }
}

function parseEstimate(value: unknown): string | undefined {
  const text = optionalString(value, 'estimatedDelivery')
  if (text === undefined || text === '') return undefined
  if (textProblem(text, { maxLength: TEXT_LIMITS.short }) || parseIsoDateTime(text, 'UTC') === null) {
    throw new IntegrationError('Invalid webhook payload: estimatedDelivery must be an ISO-8601 date or date-time.')
  }
  return text
}

/**
 * How a shipment number names a shipment of the order: "2", "002" and "s002" name the one whose reference
 * ends in "-s002" (the reference format: three digits at least, more from the thousandth shipment on;
 * by its end, since a shipment keeps its reference when the order's own changes later), and a whole
 * reference names itself.
 */
function shipmentNamed(shipmentNumber: string | number): { search?: string; matches: (reference: string) => boolean } {
  const wanted = String(shipmentNumber).trim()
  const number = /^s?\d+$/i.test(wanted) ? Number(wanted.replace(/^s/i, '')) : Number.NaN
  // A whole reference is searched for (a search matches the start of references, so it finds itself).
  if (!Number.isSafeInteger(number) || number < 1) return { search: wanted, matches: (reference) => reference === wanted }
  const suffix = `-s${String(number).padStart(3, '0')}`
  return { matches: (reference) => reference.endsWith(suffix) }
}

async function findTargetShipment(event: ShipmentWebhookEvent, context: ProviderContext) {
  const order = await context.orders.findOrderByReference(event.orderNumber)
  if (!order) throw new IntegrationError(`Unknown order: ${event.orderNumber}`)
  if (event.shipmentNumber === undefined) {
    const { shipments, total } = await context.shipments.list({ orderId: order.id, perPage: 2 })
    if (total === 0) throw new IntegrationError(`Order ${event.orderNumber} has no shipments.`)
    if (total > 1) throw new IntegrationError(`Order ${event.orderNumber} has ${total} shipments: shipmentNumber is required.`)
    return shipments[0]!
  }
  // A number is found by the end of the reference (which the order's later renaming leaves alone), among
  // the order's shipments a page at a time (by key: an order of a thousand shipments reads ten pages).
  const named = shipmentNamed(event.shipmentNumber)
  let afterId: number | undefined
  for (;;) {
    const { shipments } = await context.shipments.list({ orderId: order.id, search: named.search, perPage: 100, afterId })
    const shipment = shipments.find((candidate) => named.matches(candidate.reference))
    if (shipment) return shipment
    if (shipments.length < 100) throw new IntegrationError(`Unknown shipment ${event.shipmentNumber} of order ${event.orderNumber}.`)
    afterId = shipments.at(-1)!.id
  }
}

export const signedWebhookProvider = defineProvider({
  id: SIGNED_WEBHOOK_PROVIDER_ID,
  name: 'Signed webhooks (Standard Webhooks)',
  settingsSchema: SettingsSchema,
  secretSettings: ['secret'],

  async handleGatewayRequest(request, context) {
    const { secret, toleranceSeconds = 300 } = context.settings
    const deliveryId = verifyDelivery(request.headers, request.rawBody, secret, toleranceSeconds, context.now())
    const event = parseEvent(request.rawBody)

    const shipment = await findTargetShipment(event, context)
    const status = context.integration.statusMap[event.status]
    const scans = { trackingNumber: event.trackingNumber ?? shipment.trackingNumber ?? '', source: context.integration.handle, checkpoints: event.scans ?? [] }
    if (!status) {
      // The status changes nothing, but its scans still say where the parcel was (idempotent: a retry adds none twice).
      if (scans.checkpoints.length > 0) {
        // The update checks the number of an event it applies; kept here without one, it is checked here.
        const problem = event.trackingNumber === undefined ? null : textProblem(event.trackingNumber, { maxLength: TEXT_LIMITS.short })
        if (problem) throw new IntegrationError(`Invalid webhook payload: trackingNumber ${problem}`)
        await context.shipments.recordCheckpoints(shipment.id, scans)
      }
      context.logger.warn({ externalCode: event.status }, 'Unmapped external status code; no status changed')
      const recorded = await context.deliveries.record(deliveryId, { outcome: 'unmapped-status', reason: `Unmapped status ${event.status}` })
      if (!recorded) return { body: { success: true, applied: false, reason: 'duplicate', deliveryId } }
      return { body: { success: true, applied: false, reason: 'unmapped-status', externalCode: event.status, deliveryId } }
    }
    const statusMap = context.integration.statusMap
    const shippedScan = event.scans?.find((scan) => scan.status !== undefined && Object.hasOwn(statusMap, scan.status) && statusMap[scan.status] === 'shipped' && scan.occurredAt.getTime() <= event.occurredAtMs)
    // The ledger mark and the scans commit with the update (or not at all): of two identical deliveries,
    // even simultaneous ones, one applies, a crash before the commit leaves the retry its chance, and a
    // delivery the update refuses keeps nothing. A stale event's scans are kept.
    const result = await context.shipments.update(
      shipment.id,
      {
        status,
        trackingNumber: event.trackingNumber,
        trackingUrl: event.trackingUrl,
        carrier: event.carrier,
        service: event.service,
        integrationHandle: context.integration.handle,
        externalCode: event.status,
      },
      {
        externalEvent: {
          integrationId: context.integration.id,
          occurredAt: new Date(event.occurredAtMs),
          shippedAt: shippedScan?.occurredAt,
          estimatedDelivery: event.estimatedDelivery,
        },
        delivery: { integrationId: context.integration.id, deliveryId },
        checkpoints: scans,
      },
    )
    if (result.duplicate) return { body: { success: true, applied: false, reason: 'duplicate', deliveryId } }
    const summary = { id: shipment.id, reference: shipment.reference, status: result.shipment.status }
    if (result.stale) return { body: { success: true, applied: false, reason: 'stale-event', deliveryId, shipment: summary } }
    return { body: { success: true, applied: true, deliveryId, shipment: summary } }
  },
})
