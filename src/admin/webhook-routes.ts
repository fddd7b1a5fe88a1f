// The outbound webhooks screen's routes: subscriptions, their deliveries, enable, delete and redeliver.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { WebhookSubscriptionError } from '../errors.js'
import type { WebhookSubscription } from '../outbox/webhooks.js'
import type { FieldErrors } from './components.js'
import { emptyWebhookForm, readWebhookForm, webhookErrors, webhookListPage, webhookPage, type WebhookFormValues } from './webhook-pages.js'
import { AdminNotFound, formSchema, hide, positiveId, RECENT_DELIVERIES, routePermissions, text, type AdminScreen, type Form } from './screen.js'

export function registerWebhookRoutes(screen: AdminScreen) {
  const { scope, options, prefix, context, sendPage, noticeOf } = screen
  const { webhooks } = options
  const { manage } = routePermissions

  async function renderWebhooks(
    request: FastifyRequest,
    reply: FastifyReply,
    state: { values?: WebhookFormValues; errors?: FieldErrors; created?: WebhookSubscription & { secret: string }; status?: number } = {},
  ) {
    const content = webhookListPage(context(request, reply), {
      subscriptions: await webhooks.list(),
      values: state.values ?? emptyWebhookForm(),
      errors: state.errors ?? {},
      flash: noticeOf(request),
      created: state.created ?? null,
    })
    // The page that shows a secret is never kept by a cache.
    if (state.created) reply.header('cache-control', 'no-store')
    return sendPage(request, reply, 'Webhooks', content, state.status)
  }

  scope.get('/webhooks', { schema: hide, config: manage }, async (request, reply) => renderWebhooks(request, reply))

  // The answer is the page itself, not a redirect: the secret is shown once and never put in a URL.
  scope.post<{ Body: Form }>('/webhooks', { schema: formSchema, config: manage }, async (request, reply) => {
    const { values, input } = readWebhookForm(request.body)
    try {
      const created = await webhooks.create(input)
      return renderWebhooks(request, reply, { created, status: 201 })
    } catch (error) {
      if (!(error instanceof WebhookSubscriptionError)) throw error
      return renderWebhooks(request, reply, { values, errors: webhookErrors(error.message), status: 422 })
    }
  })

  const requireSubscription = async (raw: string): Promise<WebhookSubscription> => {
    const id = positiveId(raw, () => AdminNotFound('Webhook subscription'))
    const subscription = await webhooks.get(id)
    if (!subscription) throw AdminNotFound('Webhook subscription')
    return subscription
  }

  const recentDeliveries = (id: number) => webhooks.deliveries(id, { limit: RECENT_DELIVERIES, newestFirst: true })

  scope.get<{ Params: { id: string } }>('/webhooks/:id', { schema: hide, config: manage }, async (request, reply) => {
    const subscription = await requireSubscription(request.params.id)
    const content = webhookPage(context(request, reply), subscription, await recentDeliveries(subscription.id), noticeOf(request))
    return sendPage(request, reply, `Webhook ${subscription.url}`, content)
  })

  for (const [action, enabled] of [['enable', true], ['disable', false]] as const) {
    scope.post<{ Params: { id: string } }>(`/webhooks/:id/${action}`, { schema: formSchema, config: manage }, async (request, reply) => {
      const subscription = await requireSubscription(request.params.id)
      await webhooks.update(subscription.id, { enabled })
      return reply.redirect(`${prefix}/webhooks/${subscription.id}?notice=${enabled ? 'webhookEnabled' : 'webhookDisabled'}`, 303)
    })
  }

  scope.post<{ Params: { id: string } }>('/webhooks/:id/delete', { schema: formSchema, config: manage }, async (request, reply) => {
    const subscription = await requireSubscription(request.params.id)
    await webhooks.remove(subscription.id)
    return reply.redirect(`${prefix}/webhooks?notice=webhookDeleted`, 303)
  })

  scope.post<{ Params: { id: string }; Body: Form }>('/webhooks/:id/redeliver', { schema: formSchema, config: manage }, async (request, reply) => {
    const subscription = await requireSubscription(request.params.id)
    const deliveryId = text(request.body.deliveryId)
    // Only a delivery of this subscription: its id ends with the subscription's (see deliveriesFor).
    if (!deliveryId.endsWith(`:webhook:${subscription.id}`)) throw AdminNotFound('Webhook delivery')
    let queued: boolean
    try {
      queued = await webhooks.redeliver(deliveryId)
    } catch (error) {
      if (error instanceof WebhookSubscriptionError) throw AdminNotFound('Webhook delivery')
      throw error
    }
    return reply.redirect(`${prefix}/webhooks/${subscription.id}?notice=${queued ? 'redelivered' : 'notRedelivered'}`, 303)
  })
}
