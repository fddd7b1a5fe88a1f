// The names of the package's events, as listeners, the outbox and webhook subscriptions know them.
import type { ShipmentsEventMap } from '../model/events.js'

export type WebhookEventName = keyof ShipmentsEventMap

export const WEBHOOK_EVENT_NAMES = [
  'shipmentCreated',
  'shipmentStatusChanged',
  'shipmentDeleted',
  'shipmentRestored',
  'orderAdvanced',
  'shipNotificationRecorded',
  'parcelAdded',
  'parcelChanged',
  'parcelRemoved',
  'labelPurchased',
  'labelVoided',
  'returnRequested',
  'returnAuthorised',
  'returnRejected',
  'returnLabelSent',
  'returnLabelVoided',
  'returnReceived',
  'returnClosed',
  'estimateChanged',
  'carrierMilestone',
  'manifestCreated',
  'batchCompleted',
] as const satisfies readonly WebhookEventName[]

// Every event is listed: an event added to the map and not here fails the type check.
const everyEventListed: Exclude<WebhookEventName, (typeof WEBHOOK_EVENT_NAMES)[number]> extends never ? true : false = true
void everyEventListed
