// Outbound webhooks: subscriptions stored in the database, one delivery job per event and subscription,
// signed per Standard Webhooks, retried with backoff, with an attempt log and manual redelivery.
import { randomBytes } from 'node:crypto'
import type { DataLayer, NewOutboxMessage, OutboxRow, OutboxState, WebhookSubscriptionRow } from '../db/data-layer.js'
import { WebhookSubscriptionError } from '../errors.js'
import { signWebhook } from '../signing/standard-webhooks.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import type { JobHandler, OutboxDispatcher } from './dispatcher.js'
import { postHttp, privateReceiverProblem } from './http-delivery.js'
import { cachedRows, FOLLOW_UP_ROWS_MAX_AGE_MS } from './cached-rows.js'
import { WEBHOOK_EVENT_NAMES, type WebhookEventName } from './event-names.js'

export const WEBHOOK_DELIVERY_JOB = 'webhookDelivery'

export interface WebhookOptions {
  /** Allow receivers on loopback and private addresses. Default false. */
  allowPrivateAddresses: boolean
  /** Each request's timeout. Default 10 s. */
  timeoutMs: number
  /** A subscription is disabled after this many failed attempts in a row. Default 20. */
  disableAfterFailures: number
}

/** A subscription as the service returns it: the secret is only ever returned by `create` and `rotateSecret`. */
export interface WebhookSubscription {
  id: number
  url: string
  /** Event names, or ["*"] for every event. */
  events: Array<WebhookEventName | '*'>
  description: string | null
  enabled: boolean
  /** Failed attempts since the last success. */
  failureCount: number
  /** Why the package disabled it (a run of failures), or null. */
  disabledReason: string | null
  dateCreated: string
  dateUpdated: string
}

export interface WebhookSubscriptionInput {
  url: string
  events: Array<WebhookEventName | '*'>
  description?: string | null | undefined
  enabled?: boolean | undefined
  /** A Standard Webhooks secret ("whsec_" and base64 of 24 to 64 bytes). Default: a new random one. */
  secret?: string | undefined
}

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

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`

function checkInput(input: Partial<WebhookSubscriptionInput>, allowPrivateAddresses: boolean) {
  if (input.url !== undefined) {
    const problem = typeof input.url === 'string' ? textProblem(input.url, { maxLength: TEXT_LIMITS.url }) : 'must be a string'
    if (problem) throw new WebhookSubscriptionError(`url: ${problem}`)
    let url: URL
    try {
      url = new URL(input.url)
    } catch {
      throw new WebhookSubscriptionError('url: must be an absolute http or https URL')
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookSubscriptionError('url: must be an absolute http or https URL')
    if (url.username || url.password) throw new WebhookSubscriptionError('url: must not carry credentials')
    // Refused now rather than failing every delivery (names are checked again on the address they resolve to).
    const privateReceiver = allowPrivateAddresses ? null : privateReceiverProblem(url)
    if (privateReceiver) throw new WebhookSubscriptionError(`url: ${privateReceiver} (webhooks.allowPrivateAddresses allows it)`)
  }
  if (input.events !== undefined) {
    if (!Array.isArray(input.events) || input.events.length === 0) throw new WebhookSubscriptionError('events: name at least one event, or "*"')
    for (const name of input.events) {
      if (name !== '*' && !(WEBHOOK_EVENT_NAMES as readonly string[]).includes(name)) {
        throw new WebhookSubscriptionError(`events: "${String(name)}" is not an event (${WEBHOOK_EVENT_NAMES.join(', ')} or *)`)
      }
    }
  }
  if (input.description != null) {
    const problem = typeof input.description === 'string' ? textProblem(input.description, { maxLength: TEXT_LIMITS.short }) : 'must be a string'
    if (problem) throw new WebhookSubscriptionError(`description: ${problem}`)
  }
  if (input.enabled !== undefined && typeof input.enabled !== 'boolean') throw new WebhookSubscriptionError('enabled: must be a boolean')
  if (input.secret !== undefined) {
    const key = typeof input.secret === 'string' && input.secret.startsWith('whsec_') ? Buffer.from(input.secret.slice(6), 'base64') : null
    if (!key || key.length < 24 || key.length > 64 || key.toString('base64') !== input.secret.slice(6)) {
      throw new WebhookSubscriptionError('secret: must be "whsec_" followed by the base64 of 24 to 64 bytes')
    }
  }
}

export interface WebhookServiceDependencies {
  data: DataLayer
  dispatcher: Pick<OutboxDispatcher, 'sweep'>
  options: WebhookOptions
  /** Delays before each retry; the delivery fails for good when they run out. */
  retryDelaysMs: readonly number[]
  present: (date: Date) => string
}

export type WebhookService = ReturnType<typeof createWebhookService>

export function createWebhookService(deps: WebhookServiceDependencies) {
  const { data, options, present } = deps
  // Changes made here are seen at once; another instance's within FOLLOW_UP_ROWS_MAX_AGE_MS.
  const enabledSubscriptions = cachedRows(async () => (await data.outbox.listSubscriptions()).filter((row) => row.enabled), FOLLOW_UP_ROWS_MAX_AGE_MS)

  const toSubscription = (row: WebhookSubscriptionRow): WebhookSubscription => ({
    id: row.id,
    url: row.url,
    events: row.events as WebhookSubscription['events'],
    description: row.description,
    enabled: row.enabled,
    failureCount: row.failureCount,
    disabledReason: row.disabledReason,
    dateCreated: present(row.createdAt),
    dateUpdated: present(row.updatedAt),
  })

  async function requireRow(id: number): Promise<WebhookSubscriptionRow> {
    const row = Number.isSafeInteger(id) ? await data.outbox.findSubscription(id) : undefined
    if (!row) throw new WebhookSubscriptionError(`id: no webhook subscription ${id}`)
    return row
  }

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

    /** Creates a subscription; the answer carries its secret (kept by the receiver to verify deliveries). */
    async create(input: WebhookSubscriptionInput): Promise<WebhookSubscription & { secret: string }> {
      if (input?.url === undefined || input?.events === undefined) throw new WebhookSubscriptionError('url and events are required')
      checkInput(input, options.allowPrivateAddresses)
      const secret = input.secret ?? newSecret()
      const row = await data.outbox.insertSubscription({
        url: input.url,
        events: input.events,
        secret,
        description: input.description ?? null,
        enabled: input.enabled ?? true,
        failureCount: 0,
        disabledReason: null,
        updatedAt: new Date(),
      })
      enabledSubscriptions.invalidate()
      return { ...toSubscription(row), secret }
    },

    /** Changes a subscription; enabling it again clears its failure count and reason. */
    async update(id: number, changes: { [K in keyof WebhookSubscriptionInput]?: WebhookSubscriptionInput[K] | undefined }): Promise<WebhookSubscription> {
      await requireRow(id)
      checkInput(changes, options.allowPrivateAddresses)
      const row = await data.outbox.updateSubscription(id, {
        ...(changes.url !== undefined && { url: changes.url }),
        ...(changes.events !== undefined && { events: changes.events }),
        ...(changes.description !== undefined && { description: changes.description }),
        ...(changes.secret !== undefined && { secret: changes.secret }),
        ...(changes.enabled !== undefined && { enabled: changes.enabled }),
        ...(changes.enabled === true && { failureCount: 0, disabledReason: null }),
        updatedAt: new Date(),
      })
      enabledSubscriptions.invalidate()
      return toSubscription(row!)
    },

    /** Replaces the secret with a new random one and returns it. */
    async rotateSecret(id: number): Promise<string> {
      await requireRow(id)
      const secret = newSecret()
      await data.outbox.updateSubscription(id, { secret, updatedAt: new Date() })
      enabledSubscriptions.invalidate()
      return secret
    },

    async get(id: number): Promise<WebhookSubscription | null> {
      const row = Number.isSafeInteger(id) ? await data.outbox.findSubscription(id) : undefined
      return row ? toSubscription(row) : null
    },

    async list(): Promise<WebhookSubscription[]> {
      return (await data.outbox.listSubscriptions()).map(toSubscription)
    },

    async remove(id: number): Promise<void> {
      await requireRow(id)
      await data.outbox.deleteSubscription(id)
      enabledSubscriptions.invalidate()
    },

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
