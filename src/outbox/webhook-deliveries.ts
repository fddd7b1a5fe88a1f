// Webhook deliveries: the delivery jobs a batch of delivered events causes (one per event and matching
// subscription, in commit order per subscription and shipment), a subscription's deliveries with their
// attempt logs, and a delivery sent again.
import type { NewOutboxMessage, OutboxRow, OutboxState } from '../db/data-layer.js'
import { WebhookSubscriptionError } from '../errors.js'
import type { WebhookServiceContext } from './webhook-context.js'

export const WEBHOOK_DELIVERY_JOB = 'webhookDelivery'

export interface WebhookDelivery {
  /** The delivery's id (for `redeliver`); the receiver sees the event's id as `webhook-id`. */
  deliveryId: string
  eventId: string
  eventName: string
  /** `skipped` is never used for webhook deliveries: one whose subscription is gone or disabled fails. */
  state: OutboxState
  attempts: number
  lastError: string | null
  nextAttemptAt: string | null
  dateCreated: string
  attemptLog: Array<{ date: string; statusCode: number | null; durationMs: number; error: string | null }>
}

export function createWebhookDeliveries(shared: WebhookServiceContext) {
  const { deps, enabledSubscriptions, requireRow } = shared
  const { data, present } = deps

  /** The delivery jobs every matching, enabled subscription gets for these delivered events. */
  async function deliveriesFor(events: OutboxRow[]): Promise<NewOutboxMessage[]> {
    const subscriptions = await enabledSubscriptions.get()
    if (subscriptions.length === 0) return []
    const jobs: NewOutboxMessage[] = []
    for (const event of events) {
      for (const subscription of subscriptions) {
        if (!subscription.events.includes('*') && !subscription.events.includes(event.name)) continue
        jobs.push({
          kind: 'job',
          name: WEBHOOK_DELIVERY_JOB,
          // Written once per event and subscription, however often the event is delivered.
          messageId: `${event.messageId}:webhook:${subscription.id}`,
          // One subscription's deliveries of one shipment's (or order's) events go out one at a time, in
          // commit order: a receiver applying them as they arrive ends on the latest status.
          orderingKey: `webhook:${subscription.id}:${event.orderingKey}`,
          payload: {
            subscriptionId: subscription.id,
            eventId: event.messageId,
            sequence: event.id,
            type: event.name,
            timestamp: event.createdAt.toISOString(),
            data: event.payload,
          },
        })
      }
    }
    return jobs
  }

  return {
    deliveriesFor,

    /** The subscription's deliveries, oldest first (or the newest first), each with its attempt log (newest attempt first). */
    async deliveries(id: number, page: { afterId?: number | undefined; limit?: number | undefined; newestFirst?: boolean | undefined } = {}): Promise<WebhookDelivery[]> {
      await requireRow(id)
      const rows = await data.outbox.list({
        kind: 'job',
        name: WEBHOOK_DELIVERY_JOB,
        orderingKeyPrefix: `webhook:${id}:`,
        afterId: page.afterId,
        newestFirst: page.newestFirst === true,
        limit: Math.min(500, Math.max(1, page.limit ?? 100)),
      })
      return Promise.all(
        rows.map(async (row) => ({
          deliveryId: row.messageId,
          eventId: String(row.payload.eventId),
          eventName: String(row.payload.type),
          state: row.state,
          attempts: row.attempts,
          lastError: row.lastError,
          nextAttemptAt: row.state === 'pending' ? present(row.availableAt) : null,
          dateCreated: present(row.createdAt),
          attemptLog: (await data.outbox.attempts(row.id)).map((attempt) => ({
            date: present(attempt.attemptedAt),
            statusCode: attempt.statusCode,
            durationMs: attempt.durationMs,
            error: attempt.error,
          })),
        })),
      )
    },

    /** Sends a finished or failed delivery again (with fresh retries); the answer says whether it was queued. */
    async redeliver(deliveryId: string): Promise<boolean> {
      // No message id holds NUL (PostgreSQL text cannot): such an id names no delivery rather than failing the query.
      const row = typeof deliveryId === 'string' && !deliveryId.includes('\u0000') ? await data.outbox.find(deliveryId) : undefined
      if (!row || row.name !== WEBHOOK_DELIVERY_JOB) throw new WebhookSubscriptionError(`deliveryId: no webhook delivery "${deliveryId}"`)
      const queued = (await data.outbox.requeue(deliveryId)) !== undefined
      if (queued) void deps.dispatcher.sweep()
      return queued
    },
  }
}
