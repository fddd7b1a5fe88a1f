// Webhook subscriptions: created (with a new secret unless one is given), changed, read and removed,
// each checked first (an absolute http(s) URL with no credentials, known events, a Standard Webhooks secret).
import { randomBytes } from 'node:crypto'
import type { WebhookSubscriptionRow } from '../db/data-layer.js'
import { WebhookSubscriptionError } from '../errors.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import { privateReceiverProblem } from './http-delivery.js'
import { WEBHOOK_EVENT_NAMES, type WebhookEventName } from './event-names.js'
import type { WebhookServiceContext } from './webhook-context.js'

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

/** `options`: the webhook options (WebhookOptions in webhooks.ts) the checks read. */
export function createWebhookSubscriptions(shared: WebhookServiceContext, options: { readonly allowPrivateAddresses: boolean }) {
  const { deps, enabledSubscriptions, requireRow } = shared
  const { data, present } = deps

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

  return {
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
  }
}
