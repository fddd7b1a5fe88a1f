// What the webhook service's concerns (webhook-subscriptions.ts, webhook-deliveries.ts and the delivery
// job in webhooks.ts) share: the dependencies they read, the enabled subscriptions as cached, and the read
// of a subscription by id. Rule: it knows none of the concerns; they import it, never each other.
import type { DataLayer, WebhookSubscriptionRow } from '../db/data-layer.js'
import { WebhookSubscriptionError } from '../errors.js'
import type { OutboxDispatcher } from './dispatcher.js'
import { cachedRows, FOLLOW_UP_ROWS_MAX_AGE_MS } from './cached-rows.js'

/** The webhook service's dependencies but its options, which webhooks.ts declares (WebhookServiceDependencies). */
export interface WebhookContextDependencies {
  data: DataLayer
  dispatcher: Pick<OutboxDispatcher, 'sweep'>
  present: (date: Date) => string
}

/** The shared part of one webhook service: built once, handed to each concern's factory. */
export function createWebhookServiceContext(deps: WebhookContextDependencies) {
  const { data } = deps
  // Changes made here are seen at once; another instance's within FOLLOW_UP_ROWS_MAX_AGE_MS.
  const enabledSubscriptions = cachedRows(async () => (await data.outbox.listSubscriptions()).filter((row) => row.enabled), FOLLOW_UP_ROWS_MAX_AGE_MS)

  async function requireRow(id: number): Promise<WebhookSubscriptionRow> {
    const row = Number.isSafeInteger(id) ? await data.outbox.findSubscription(id) : undefined
    if (!row) throw new WebhookSubscriptionError(`id: no webhook subscription ${id}`)
    return row
  }

  return { deps, enabledSubscriptions, requireRow }
}

export type WebhookServiceContext = ReturnType<typeof createWebhookServiceContext>
