// Outbound webhooks: subscriptions stored in the database, one delivery job per event and subscription,
// signed per Standard Webhooks, retried with backoff, with an attempt log and manual redelivery.
// Composed of one module per concern over a shared context (webhook-context.ts): webhook-subscriptions.ts
// (the subscriptions and their checks), webhook-deliveries.ts (the jobs events cause, the deliveries
// read and sent again) and here the delivery job, the part that reads the webhook options (timeout,
// private receivers, disabling after failures). The types stay importable from here.
import type { JobHandler } from './dispatcher.js'
import { postHttp } from './http-delivery.js'
import { signWebhook } from '../signing/standard-webhooks.js'
import { createWebhookServiceContext, type WebhookContextDependencies } from './webhook-context.js'
import { createWebhookSubscriptions } from './webhook-subscriptions.js'
import { createWebhookDeliveries } from './webhook-deliveries.js'

export type { WebhookSubscription, WebhookSubscriptionInput } from './webhook-subscriptions.js'
export { WEBHOOK_DELIVERY_JOB, type WebhookDelivery } from './webhook-deliveries.js'

export interface WebhookOptions {
  /** Allow receivers on loopback and private addresses. Default false. */
  allowPrivateAddresses: boolean
  /** Each request's timeout. Default 10 s. */
  timeoutMs: number
  /** A subscription is disabled after this many failed attempts in a row. Default 20. */
  disableAfterFailures: number
}

export interface WebhookServiceDependencies extends WebhookContextDependencies {
  options: WebhookOptions
  /** Delays before each retry; the delivery fails for good when they run out. */
  retryDelaysMs: readonly number[]
}

export type WebhookService = ReturnType<typeof createWebhookService>

export function createWebhookService(deps: WebhookServiceDependencies) {
  const { data, options } = deps
  const shared = createWebhookServiceContext(deps)
  const { enabledSubscriptions } = shared
  const { create, update, rotateSecret, get, list, remove } = createWebhookSubscriptions(shared, options)
  const { deliveriesFor, deliveries, redeliver } = createWebhookDeliveries(shared)

  const deliveryJob: JobHandler = {
    retryDelayMs: (attempt) => deps.retryDelaysMs[attempt - 1] ?? null,
    async run(row) {
      const { subscriptionId, eventId, sequence, type, timestamp, data: eventData } = row.payload as {
        subscriptionId: number
        eventId: string
        /** Absent from deliveries written before it was added. */
        sequence?: number
        type: string
        timestamp: string
        data: Record<string, unknown>
      }
      const subscription = await data.outbox.findSubscription(subscriptionId)
      if (!subscription) return { state: 'failed', error: 'The subscription was deleted.' }
      if (!subscription.enabled) return { state: 'failed', error: 'The subscription is disabled.' }
      const body = JSON.stringify({ id: eventId, type, timestamp, sequence, data: { ...eventData, eventId } })
      const sentAt = Math.floor(Date.now() / 1000)
      const result = await postHttp({
        url: subscription.url,
        body,
        timeoutMs: options.timeoutMs,
        allowPrivateAddresses: options.allowPrivateAddresses,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'fastify-shipments-webhooks',
          'webhook-id': eventId,
          'webhook-timestamp': String(sentAt),
          'webhook-signature': signWebhook(subscription.secret, eventId, sentAt, body),
        },
      })
      const succeeded = result.error === null
      const after = await data.outbox.recordSubscriptionResult(
        subscription.id,
        succeeded,
        options.disableAfterFailures,
        `Disabled after ${options.disableAfterFailures} failed attempts in a row; the last: ${result.error}`,
      )
      if (after && !after.enabled) enabledSubscriptions.invalidate()
      if (succeeded) return { state: 'done', statusCode: result.statusCode }
      return { state: result.permanent ? 'failed' : 'retry', error: result.error!, statusCode: result.statusCode }
    },
  }

  return {
    deliveriesFor,
    deliveryJob,
    create,
    update,
    rotateSecret,
    get,
    list,
    remove,
    deliveries,
    redeliver,
  }
}
