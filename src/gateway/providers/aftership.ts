// The built-in AfterShip provider: signed tracking_update webhooks move shipments.
import { createHmac } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import { IntegrationError } from '../../errors.js'
import type { ShipmentStatus } from '../../model/shipment.js'
import { TEXT_LIMITS } from '../../text.js'
import { defineProvider } from '../providers.js'
import {
  API_BASE_URL_PATTERN,
  applyTrackingEvent,
  checkpointOf,
  checkpointsOf,
  estimateText,
  joinedPlace,
  keptText,
  checkServiceKey,
  headerValue,
  ignoredEvent,
  jsonObject,
  objectAt,
  requiredTextAt,
  serviceUrl,
  signaturesEqual,
  textAt,
  trackingPageAt,
} from './tracking-events.js'

export const AFTERSHIP_PROVIDER_ID = 'aftership'
export const AFTERSHIP_API_BASE_URL = 'https://api.aftership.com/tracking/2024-04'

/**
 * What a new AfterShip integration maps delivery tags to. `Pending` (no carrier information yet) and
 * `Expired` (no news for a long time) are left out, so they change nothing; a failed delivery attempt
 * is still in the carrier's hands.
 */
export const AFTERSHIP_STATUS_MAP: Readonly<Record<string, ShipmentStatus>> = Object.freeze({
  InfoReceived: 'fulfilled',
  InTransit: 'shipped',
  OutForDelivery: 'shipped',
  AttemptFail: 'shipped',
  Delivered: 'shipped',
  AvailableForPickup: 'shipped',
  Exception: 'on_hold',
})

const SettingsSchema = Type.Object(
  {
    webhookSecret: Type.String({ minLength: 1, title: 'Webhook secret', description: "The account's webhook secret from AfterShip's webhook settings." }),
    apiKey: Type.Optional(Type.String({ minLength: 1, title: 'API key', description: 'An AfterShip API key: only for the connection check.' })),
    apiBaseUrl: Type.Optional(
      Type.String({ pattern: API_BASE_URL_PATTERN, default: AFTERSHIP_API_BASE_URL, title: 'API base URL', description: `AfterShip's tracking API (default ${AFTERSHIP_API_BASE_URL}); https, or http on a loopback address.` }),
    ),
  },
  { additionalProperties: false },
)

/** The aftership-hmac-sha256 header AfterShip sends: base64 HMAC-SHA256 of the raw body with the webhook secret. */
export function signAfterShipWebhook(secret: string, rawBody: Buffer | string): string {
  return createHmac('sha256', secret).update(rawBody).digest('base64')
}

/** The latest Unix second of year 9999: later is no date the package stores. */
const LAST_SECOND = 253_402_300_799

/**
 * The delivery date AfterShip expects: `expected_delivery`, else the newer API's estimate objects
 * (the courier's, then AfterShip's own prediction), each as sent.
 */
function expectedDelivery(tracking: Record<string, unknown>): string | undefined {
  const estimateIn = (value: unknown) => (typeof value === 'object' && value !== null ? estimateText((value as Record<string, unknown>).estimated_delivery_date) : undefined)
  return estimateText(tracking.expected_delivery) ?? estimateIn(tracking.courier_estimated_delivery_date) ?? estimateIn(tracking.aftership_estimated_delivery_date)
}

export const afterShipProvider = defineProvider({
  id: AFTERSHIP_PROVIDER_ID,
  name: 'AfterShip tracking',
  settingsSchema: SettingsSchema,
  secretSettings: ['webhookSecret', 'apiKey'],
  defaultStatusMap: AFTERSHIP_STATUS_MAP,

  async handleGatewayRequest(request, context) {
    const signature = headerValue(request.headers, 'aftership-hmac-sha256')
    if (!signature) throw new IntegrationError('Missing aftership-hmac-sha256 header.')
    if (!signaturesEqual(signature, signAfterShipWebhook(context.settings.webhookSecret, request.rawBody))) throw new IntegrationError('Webhook signature mismatch.')

    const payload = jsonObject(request.rawBody)
    const eventId = requiredTextAt(payload, 'event_id', 'event_id')
    const kind = requiredTextAt(payload, 'event', 'event')
    // Estimated delivery dates and pending-time alerts say nothing of where the parcel is.
    if (kind !== 'tracking_update') return ignoredEvent(kind, eventId)
    const { ts } = payload
    if (typeof ts !== 'number' || !Number.isInteger(ts) || ts < 0 || ts > LAST_SECOND) {
      throw new IntegrationError('Invalid webhook payload: ts must be a Unix time in seconds.')
    }
    const tracking = objectAt(payload, 'msg', 'msg')
    const signedBy = keptText(tracking.signed_by)
    return applyTrackingEvent(
      {
        deliveryId: eventId,
        code: requiredTextAt(tracking, 'tag', 'msg.tag'),
        occurredAt: new Date(ts * 1000),
        trackingNumber: requiredTextAt(tracking, 'tracking_number', 'msg.tracking_number'),
        carrier: textAt(tracking, 'slug', 'msg.slug'),
        externalId: textAt(tracking, 'id', 'msg.id'),
        // The courier's own page first; AfterShip's tracking page when the courier has none.
        externalUrl: trackingPageAt(tracking, 'courier_tracking_link') ?? trackingPageAt(tracking, 'aftership_tracking_url'),
        checkpoints: checkpointsOf(tracking.checkpoints, (checkpoint) => {
          const tag = keptText(checkpoint.tag)
          return checkpointOf(checkpoint.checkpoint_time, {
            message: keptText(checkpoint.message, TEXT_LIMITS.statusMessage) ?? keptText(checkpoint.subtag_message, TEXT_LIMITS.statusMessage),
            location: keptText(checkpoint.location, TEXT_LIMITS.statusMessage) ?? joinedPlace([checkpoint.city, checkpoint.state, checkpoint.zip, checkpoint.country_name ?? checkpoint.country_iso3]),
            status: tag,
            subStatus: keptText(checkpoint.subtag),
            signedBy: tag === 'Delivered' ? signedBy : undefined,
          })
        }),
        estimatedDelivery: expectedDelivery(tracking),
      },
      context,
    )
  },

  async checkConnection(context) {
    const { apiKey, apiBaseUrl = AFTERSHIP_API_BASE_URL } = context.settings
    if (!apiKey) return { ok: true, message: 'No apiKey is set: webhooks need only the webhook secret. Set one to check the connection.' }
    return checkServiceKey('AfterShip', serviceUrl(apiBaseUrl, 'couriers'), { 'as-api-key': apiKey })
  },
})
