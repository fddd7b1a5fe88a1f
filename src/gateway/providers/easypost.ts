// The built-in EasyPost provider: signed tracker events (tracker.created, tracker.updated) move
// shipments; a push creates an EasyPost tracker for a shipment's tracking number; rates, labels,
// conversions and refunds through the official client (easypost-labels.ts).
import { createHmac } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import { IntegrationError } from '../../errors.js'
import type { ShipmentStatus } from '../../model/shipment.js'
import { parseIsoDateTime } from '../../time.js'
import { TEXT_LIMITS, textProblem } from '../../text.js'
import { defineProvider } from '../providers.js'
import { easyPostDeliveries } from './easypost-labels.js'
import { easyPostScanForms } from './easypost-scan-forms.js'
import { easyPostAddresses } from './easypost-addresses.js'
import {
  API_BASE_URL_PATTERN,
  applyTrackingEvent,
  checkpointOf,
  checkpointsOf,
  estimateText,
  joinedPlace,
  keptText,
  unapplied,
  type TrackingEvent,
  callService,
  checkServiceKey,
  headerValue,
  ignoredEvent,
  jsonObject,
  objectAt,
  requiredTextAt,
  serviceRefusal,
  serviceUrl,
  signaturesEqual,
  textAt,
  trackingPageAt,
} from './tracking-events.js'

export const EASYPOST_PROVIDER_ID = 'easypost'
export const EASYPOST_API_BASE_URL = 'https://api.easypost.com/v2'

/**
 * What a new EasyPost integration maps tracker statuses to. `unknown` and `error` (EasyPost cannot
 * track the number) are left out, so they change nothing; `cancelled` (the carrier's shipment was
 * voided) puts the shipment on hold rather than cancelling it, since the shop may ship it again.
 */
export const EASYPOST_STATUS_MAP: Readonly<Record<string, ShipmentStatus>> = Object.freeze({
  pre_transit: 'fulfilled',
  in_transit: 'shipped',
  out_for_delivery: 'shipped',
  delivered: 'shipped',
  available_for_pickup: 'shipped',
  return_to_sender: 'on_hold',
  failure: 'on_hold',
  cancelled: 'on_hold',
})

const SettingsSchema = Type.Object(
  {
    webhookSecret: Type.String({ minLength: 1, title: 'Webhook secret', description: 'The webhook secret given to this webhook in EasyPost (its events carry X-Hmac-Signature).' }),
    apiKey: Type.Optional(Type.String({ minLength: 1, title: 'API key', description: 'An EasyPost API key: needed to push (create trackers) and to check the connection.' })),
    apiBaseUrl: Type.Optional(
      Type.String({ pattern: API_BASE_URL_PATTERN, default: EASYPOST_API_BASE_URL, title: 'API base URL', description: `EasyPost's API (default ${EASYPOST_API_BASE_URL}); https, or http on a loopback address.` }),
    ),
    mode: Type.Optional(
      Type.Union([Type.Literal('test'), Type.Literal('production')], {
        default: 'test',
        title: 'Mode',
        description: "The mode of the API key (test or production): an answer in the other mode is refused before any label is bought.",
      }),
    ),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000, title: 'Timeout (ms)', description: 'The deadline of each call to EasyPost for rates and labels (default 15000).' })),
  },
  { additionalProperties: false },
)

/** The X-Hmac-Signature EasyPost sends: HMAC-SHA256 of the raw body, keyed with the NFKD-normalized secret. */
export function signEasyPostEvent(secret: string, rawBody: Buffer | string): string {
  return `hmac-sha256-hex=${createHmac('sha256', Buffer.from(secret.normalize('NFKD'), 'utf8')).update(rawBody).digest('hex')}`
}

const TRACKER_EVENTS = new Set(['tracker.created', 'tracker.updated'])

const basicAuthorization = (apiKey: string) => `Basic ${Buffer.from(`${apiKey}:`).toString('base64')}`

export const easyPostProvider = defineProvider({
  id: EASYPOST_PROVIDER_ID,
  name: 'EasyPost tracking',
  settingsSchema: SettingsSchema,
  secretSettings: ['webhookSecret', 'apiKey'],
  defaultStatusMap: EASYPOST_STATUS_MAP,

  async handleGatewayRequest(request, context) {
    const signature = headerValue(request.headers, 'x-hmac-signature')
    if (!signature) throw new IntegrationError('Missing X-Hmac-Signature header.')
    if (!signaturesEqual(signature, signEasyPostEvent(context.settings.webhookSecret, request.rawBody))) throw new IntegrationError('Webhook signature mismatch.')

    const event = jsonObject(request.rawBody)
    const eventId = requiredTextAt(event, 'id', 'id')
    const description = requiredTextAt(event, 'description', 'description')
    // A webhook gets every event of the account (batches, refunds, ...): only trackers move shipments.
    if (!TRACKER_EVENTS.has(description)) return ignoredEvent(description, eventId)
    const occurredAt = parseIsoDateTime(requiredTextAt(event, 'created_at', 'created_at'), 'UTC')
    if (occurredAt === null) throw new IntegrationError('Invalid webhook payload: created_at is not an ISO-8601 date-time.')
    const tracker = objectAt(event, 'result', 'result')
    const signedBy = keptText(tracker.signed_by)
    const trackingEvent: TrackingEvent = {
      deliveryId: eventId,
      code: requiredTextAt(tracker, 'status', 'result.status'),
      occurredAt: new Date(occurredAt),
      trackingNumber: requiredTextAt(tracker, 'tracking_code', 'result.tracking_code'),
      carrier: textAt(tracker, 'carrier', 'result.carrier'),
      externalId: textAt(tracker, 'id', 'result.id'),
      externalUrl: trackingPageAt(tracker, 'public_url'),
      checkpoints: checkpointsOf(tracker.tracking_details, (detail) => {
        const place = typeof detail.tracking_location === 'object' && detail.tracking_location !== null ? (detail.tracking_location as Record<string, unknown>) : {}
        const status = keptText(detail.status)
        return checkpointOf(detail.datetime, {
          message: keptText(detail.message, TEXT_LIMITS.statusMessage) ?? keptText(detail.description, TEXT_LIMITS.statusMessage),
          location: joinedPlace([place.city, place.state, place.zip, place.country]),
          status,
          subStatus: keptText(detail.status_detail),
          // EasyPost gives the signature on the tracker: it belongs to the delivery scan.
          signedBy: status === 'delivered' ? signedBy : undefined,
        })
      }),
      estimatedDelivery: estimateText(tracker.est_delivery_date),
    }
    // A test key's events (EasyPost's test trackers) never move a live shop's shipments.
    if ((event.mode === 'test' || tracker.mode === 'test') && context.settings.mode === 'production') {
      return unapplied(context, trackingEvent, 'test-mode', 'A test-mode event reached an integration set to production', { mode: 'test' })
    }
    return applyTrackingEvent(trackingEvent, context)
  },

  deliveries: { ...easyPostDeliveries(EASYPOST_API_BASE_URL), ...easyPostScanForms(EASYPOST_API_BASE_URL), ...easyPostAddresses(EASYPOST_API_BASE_URL) },

  async checkConnection(context) {
    const { apiKey, apiBaseUrl = EASYPOST_API_BASE_URL } = context.settings
    if (!apiKey) return { ok: true, message: 'No apiKey is set: events need only the webhook secret. Set one to push and to check the connection.' }
    return checkServiceKey('EasyPost', serviceUrl(apiBaseUrl, 'trackers?page_size=1'), { authorization: basicAuthorization(apiKey) })
  },

  /**
   * Creates the tracker whose events then move the shipment. The carrier is left to EasyPost's
   * detection: shops name carriers their own way, and a name EasyPost does not know fails the push.
   */
  async pushShipment(request, context) {
    const { apiKey, apiBaseUrl = EASYPOST_API_BASE_URL } = context.settings
    if (!apiKey) throw new IntegrationError('EasyPost: no apiKey is set, so no tracker can be created.')
    const trackingCode = request.shipment.trackingNumber
    if (!trackingCode) throw new IntegrationError(`Shipment ${request.shipment.reference} has no tracking number to track.`)
    const answer = await callService('EasyPost', serviceUrl(apiBaseUrl, 'trackers'), {
      method: 'POST',
      headers: { authorization: basicAuthorization(apiKey), 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ tracker: { tracking_code: trackingCode } }),
    })
    const body = (typeof answer.body === 'object' && answer.body !== null ? answer.body : {}) as Record<string, unknown>
    if (answer.status < 200 || answer.status >= 300) {
      const error = body.error as { message?: unknown } | undefined
      throw serviceRefusal('EasyPost', 'create the tracker', answer, error?.message)
    }
    const id = typeof body.id === 'string' && textProblem(body.id, { maxLength: TEXT_LIMITS.short }) === null ? body.id : null
    return { externalId: id, externalUrl: trackingPageAt(body, 'public_url') ?? null }
  },
})
