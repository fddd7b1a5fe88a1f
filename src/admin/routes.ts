// The store admins' pages: an encapsulated scope with its own cookies, form bodies, CSRF tokens,
// security headers and error pages. Every change goes through the package's services.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifyFormbody from '@fastify/formbody'
import fastifyCsrfProtection from '@fastify/csrf-protection'
import { Type } from '@sinclair/typebox'
import {
  IntegrationConfigError,
  IntegrationError,
  ShipmentsErrors,
  ShipmentUpdateRejectedError,
  ShipmentValidationError,
  WebhookSubscriptionError,
} from '../errors.js'
import type { HasPermission, ResolveUser, ShipmentsUser } from '../options.js'
import type { ShipmentService } from '../shipments/service.js'
import { isShipmentStatus, type ShipmentStatus } from '../shipments/shipment.js'
import type { IntegrationService } from '../gateway/integrations.js'
import type { AnyProviderDefinition, ConnectionCheck, ProviderRegistry } from '../gateway/providers.js'
import type { OrderStore } from '../orders/order-store.js'
import type { OrderExchangeService } from '../order-exchange/service.js'
import type { ShipmentFieldDefinition } from '../shipments/field-layout.js'
import { ShipmentsPermissions } from '../shipments/routes.js'
import { html, type SafeHtml } from './html.js'
import { notice, standaloneLayout, STATUS_LABELS, type FieldErrors } from './components.js'
import type { AdminPage, ResolvedAdminOptions } from './options.js'
import {
  formFieldErrors,
  orderPanel,
  readShipmentForm,
  shipmentFormValues,
  shipmentListPage,
  shipmentPage,
  type BulkOutcome,
  type PageContext,
  type ShipmentListFilters,
} from './shipment-pages.js'
import { integrationErrors, integrationFormValues, integrationListPage, integrationPage, readIntegrationForm, type IntegrationFormValues } from './integration-pages.js'
import { shipStationPage } from './shipstation-page.js'
import type { WebhookService, WebhookSubscription } from '../outbox/webhooks.js'
import { emptyWebhookForm, readWebhookForm, webhookErrors, webhookListPage, webhookPage, type WebhookFormValues } from './webhook-pages.js'

export interface AdminRoutesOptions {
  admin: ResolvedAdminOptions
  shipments: ShipmentService
  integrations: IntegrationService
  webhooks: WebhookService
  providers: ProviderRegistry
  orders: OrderStore
  orderExchange: OrderExchangeService | null
  /** Where the order exchange is mounted, for the URL to paste into ShipStation. */
  orderExchangePrefix: string
  resolveUser: ResolveUser
  hasPermission: HasPermission
  timeZone: string
  shipmentFields: ShipmentFieldDefinition[]
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The permission an admin page needs; pages without one (the assets) are public. */
    shipmentsAdminPermission?: string
  }
  interface FastifyRequest {
    /** The signed-in user and what they may do, inside the admin pages' scope. */
    shipmentsAdmin: { user: ShipmentsUser; can: PageContext['can'] } | null
  }
}

/** No inline script or style anywhere: the package's own files only (forms post to the same site). */
export const ADMIN_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'self'; base-uri 'none'"

const ASSETS = {
  'admin.css': { type: 'text/css; charset=utf-8', body: readFileSync(new URL('../../assets/admin/admin.css', import.meta.url)) },
  'admin.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('../../assets/admin/admin.js', import.meta.url)) },
}

/** Notices a redirect may ask for by name; the page never shows text taken from the query. */
const NOTICES: Record<string, string> = {
  saved: 'Saved.',
  unchanged: 'Nothing changed.',
  transitioned: 'Status changed.',
  deleted: 'Shipment deleted.',
  restored: 'Shipment restored.',
  created: 'Created.',
  enabled: 'Integration enabled.',
  disabled: 'Integration disabled.',
  webhookEnabled: 'Subscription enabled.',
  webhookDisabled: 'Subscription disabled.',
  webhookDeleted: 'Subscription deleted.',
  redelivered: 'Delivery queued again.',
  notRedelivered: 'Not redelivered: the delivery is still pending.',
}

const FormBody = Type.Record(Type.String(), Type.Union([Type.String(), Type.Array(Type.String())]))
type Form = Record<string, string | string[]>
const text = (value: unknown) => (typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '')

/** A path id that is not a positive integer names nothing: a 404. */
function positiveId(raw: string, notFound: () => Error): number {
  const id = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(id)) throw notFound()
  return id
}

const AdminNotFound = (what: string) => Object.assign(new Error(`${what} not found.`), { statusCode: 404, code: 'SHIPMENTS_ADMIN_NOT_FOUND' })
const AdminBadRequest = (message: string) => Object.assign(new Error(message), { statusCode: 400, code: 'SHIPMENTS_ADMIN_BAD_REQUEST' })

export const adminRoutes: FastifyPluginAsync<AdminRoutesOptions> = async (scope, options) => {
  const { admin, shipments, integrations, webhooks, providers, orders, orderExchange, resolveUser, hasPermission, timeZone, shipmentFields } = options
  const prefix = admin.prefix

  // Cookies (for the CSRF secret): the host's @fastify/cookie when it has one, else the package's own,
  // in this scope only. No session library is required of the host.
  if (!scope.hasRequestDecorator('cookies')) await scope.register(fastifyCookie)
  // Forms: the host's parser when it registered one for every route, else the package's, here only.
  if (!scope.hasContentTypeParser('application/x-www-form-urlencoded')) await scope.register(fastifyFormbody, { bodyLimit: 262_144 })
  await scope.register(fastifyCsrfProtection, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: 'shipments_admin_csrf',
    cookieOpts: { path: prefix, sameSite: 'strict', httpOnly: true, secure: 'auto' },
    // Tokens are bound to the user (an HMAC with the key), so a token made for one user fails for another.
    getUserInfo: (request) => String(request.shipmentsAdmin?.user.id ?? ''),
    csrfOpts: { hmacKey: admin.csrfKey ?? randomBytes(32).toString('base64'), userInfo: true },
  })

  scope.decorateRequest('shipmentsAdmin', null)

  scope.addHook('onRequest', async (_request, reply) => {
    reply.header('content-security-policy', ADMIN_CONTENT_SECURITY_POLICY)
    reply.header('x-content-type-options', 'nosniff')
    reply.header('referrer-policy', 'same-origin')
    reply.header('x-frame-options', 'SAMEORIGIN')
  })

  // The user first (a missing one goes to the host's login page), then the page's permission: on the
  // server, for every page and action, whatever the pages showed.
  scope.addHook('onRequest', async (request, reply) => {
    const permission = request.routeOptions.config.shipmentsAdminPermission
    if (permission === undefined) return
    const user = (await resolveUser(request)) ?? null
    if (!user) {
      const separator = admin.loginUrl.includes('?') ? '&' : '?'
      const returnTo = request.method === 'GET' ? request.url : prefix
      return reply.redirect(`${admin.loginUrl}${separator}returnTo=${encodeURIComponent(returnTo)}`, 303)
    }
    const may = (name: string) => Promise.resolve(hasPermission(user, name, request)).then(Boolean)
    const [view, edit, transition, manage] = await Promise.all([
      may(ShipmentsPermissions.viewShipments),
      may(ShipmentsPermissions.editShipments),
      may(ShipmentsPermissions.transitionShipments),
      may(ShipmentsPermissions.manageIntegrations),
    ])
    request.shipmentsAdmin = { user, can: { edit, transition, manage } }
    const granted: Record<string, boolean> = {
      [ShipmentsPermissions.viewShipments]: view,
      [ShipmentsPermissions.editShipments]: edit,
      [ShipmentsPermissions.transitionShipments]: transition,
      [ShipmentsPermissions.manageIntegrations]: manage,
    }
    if (!(granted[permission] ?? (await may(permission)))) throw new ShipmentsErrors.Forbidden(permission)
  })

  // Forms carry their token in the body, so the check runs once the body is read.
  scope.addHook('preHandler', (request, reply, done) => {
    if (request.method !== 'POST') return done()
    scope.csrfProtection(request, reply, done)
  })

  const context = (request: FastifyRequest, reply: FastifyReply): PageContext => {
    const state = request.shipmentsAdmin!
    return { prefix, csrf: reply.generateCsrf({ userInfo: String(state.user.id) }), can: state.can, timeZone }
  }

  const navigationFor = (request: FastifyRequest) => {
    const can = request.shipmentsAdmin?.can
    const links = [{ label: 'Shipments', href: `${prefix}/shipments` }]
    if (can?.manage) links.push({ label: 'Integrations', href: `${prefix}/integrations` }, { label: 'Webhooks', href: `${prefix}/webhooks` }, { label: 'ShipStation', href: `${prefix}/shipstation` })
    const path = request.url.split('?')[0]
    return links.map((link) => ({ ...link, current: path.startsWith(link.href) }))
  }

  const head = html`<link rel="stylesheet" href="${prefix}/assets/admin.css"><script src="${prefix}/assets/admin.js" defer></script>`.value

  /** Sends a page inside the host's layout (or the standalone one). */
  async function sendPage(request: FastifyRequest, reply: FastifyReply, title: string, content: SafeHtml, status = 200) {
    const state = request.shipmentsAdmin
    const wrapped = html`<div class="shipments-admin">${content}</div>`.value
    const page: AdminPage | null = state
      ? { title, head, content: wrapped, navigation: navigationFor(request), user: state.user, request }
      : null
    const document = page && admin.layout ? await admin.layout(page) : standaloneLayout(page ?? { title, head, content: wrapped, navigation: [], user: { id: '' }, request })
    return reply.code(status).type('text/html; charset=utf-8').send(document)
  }

  const noticeOf = (request: FastifyRequest) => NOTICES[text((request.query as Record<string, unknown>).notice)] ?? null

  scope.setErrorHandler(async (error: FastifyError, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500
    let message: string
    if (error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET') {
      message = 'This form has expired or was not sent from this site. Reload the page and try again.'
    } else if (status >= 500) {
      request.log.error({ err: error }, 'Admin page failed')
      message = 'An internal error occurred.'
    } else {
      message = error.validation ? 'The request is not valid.' : error.message
    }
    const title = status === 403 ? 'Forbidden' : status === 404 ? 'Not found' : status >= 500 ? 'Error' : 'Request refused'
    return sendPage(request, reply, title, html`<h1>${title}</h1>${notice('error', message)}<p><a href="${prefix}/shipments">Back to the shipments</a></p>`, status)
  })
  scope.setNotFoundHandler(async (request, reply) =>
    sendPage(request, reply, 'Not found', html`<h1>Not found</h1>${notice('error', 'No admin page at this address.')}`, 404),
  )

  const view = { shipmentsAdminPermission: ShipmentsPermissions.viewShipments }
  const edit = { shipmentsAdminPermission: ShipmentsPermissions.editShipments }
  const transition = { shipmentsAdminPermission: ShipmentsPermissions.transitionShipments }
  const manage = { shipmentsAdminPermission: ShipmentsPermissions.manageIntegrations }
  const hide = { hide: true }
  const formSchema = { hide: true, body: FormBody }

  // --- Assets -------------------------------------------------------------------------------------

  scope.get<{ Params: { file: string } }>('/assets/:file', { schema: hide }, async (request, reply) => {
    const asset = ASSETS[request.params.file as keyof typeof ASSETS]
    if (!asset) throw AdminNotFound('Asset')
    return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body)
  })

  // --- Shipments ----------------------------------------------------------------------------------

  scope.get('/', { schema: hide, config: view }, async (_request, reply) => reply.redirect(`${prefix}/shipments`, 303))

  async function renderList(request: FastifyRequest, reply: FastifyReply, query: Record<string, unknown>, bulk?: BulkOutcome[], status = 200) {
    const statusFilter = text(query.status)
    if (statusFilter !== '' && !isShipmentStatus(statusFilter)) throw AdminBadRequest(`"${statusFilter}" is not a shipment status.`)
    const filters: ShipmentListFilters = { status: statusFilter as ShipmentStatus | '', order: text(query.order).trim(), q: text(query.q).trim() }
    const pageNumber = /^\d{1,9}$/.test(text(query.page)) ? Math.max(1, Number(text(query.page))) : 1
    let orderId: number | undefined
    let orderNotFound = false
    if (filters.order) {
      const order = (await orders.findOrderByReference(filters.order)) ?? (/^[1-9]\d{0,9}$/.test(filters.order) ? await orders.findOrder(Number(filters.order)) : undefined)
      if (order) orderId = order.id
      else orderNotFound = true
    }
    const page = orderNotFound
      ? { shipments: [], total: 0, page: 1, perPage: 50 }
      : await shipments.list({ status: filters.status || undefined, orderId, search: filters.q || undefined, page: pageNumber, perPage: 50 })
    return sendPage(request, reply, 'Shipments', shipmentListPage(context(request, reply), page, filters, { orderNotFound, bulk }), status)
  }

  scope.get('/shipments', { schema: hide, config: view }, async (request, reply) => renderList(request, reply, request.query as Record<string, unknown>))

  scope.post<{ Body: Form }>('/shipments/bulk-status', { schema: formSchema, config: transition }, async (request, reply) => {
    const target = text(request.body.status)
    const ids = [...new Set((Array.isArray(request.body.ids) ? request.body.ids : [request.body.ids ?? '']).filter((id) => /^[1-9]\d{0,15}$/.test(id)).map(Number))]
    if (!isShipmentStatus(target)) throw AdminBadRequest('Choose the status to change the selected shipments to.')
    if (ids.length === 0) throw AdminBadRequest('Select at least one shipment.')
    if (ids.length > 100) throw AdminBadRequest('Change at most 100 shipments at a time.')
    const userId = String(request.shipmentsAdmin!.user.id)
    const statusMessage = text(request.body.statusMessage)
    const outcomes: BulkOutcome[] = []
    // One at a time: each change takes its shipment's mutex and writes its own history row and event.
    for (const id of ids) {
      try {
        const result = await shipments.update(id, { status: target, statusMessage: statusMessage || null }, { userId })
        outcomes.push(
          result.transition
            ? { id, reference: result.shipment.reference, outcome: 'moved', message: `moved from ${STATUS_LABELS[result.transition.from]} to ${STATUS_LABELS[target]}.` }
            : { id, reference: result.shipment.reference, outcome: 'unchanged', message: `already ${STATUS_LABELS[target]}.` },
        )
      } catch (error) {
        const shipment = await shipments.get(id)
        outcomes.push({ id, reference: shipment?.reference ?? null, outcome: 'refused', message: refusalText(error, request) })
      }
    }
    return renderList(request, reply, {}, outcomes)
  })

  /** What a refused change tells the admin: the service's own message; anything unexpected is logged. */
  function refusalText(error: unknown, request: FastifyRequest): string {
    if (error instanceof ShipmentValidationError) return Object.values(error.errors).flat().join(' ')
    if (error instanceof ShipmentUpdateRejectedError) return error.message
    const coded = error as { statusCode?: number; message?: string }
    if (coded.statusCode === 404 || coded.statusCode === 403) return coded.message ?? 'Refused.'
    request.log.error({ err: error }, 'Admin bulk status change failed for a shipment')
    return 'An internal error occurred.'
  }

  const shipmentId = (raw: string) => positiveId(raw, () => new ShipmentsErrors.ShipmentNotFound(raw))

  async function renderShipment(
    request: FastifyRequest,
    reply: FastifyReply,
    id: number,
    state: { values?: Record<string, string>; errors?: FieldErrors; transitionErrors?: FieldErrors; status?: number } = {},
  ) {
    const shipment = await shipments.get(id)
    if (!shipment) throw new ShipmentsErrors.ShipmentNotFound(id)
    const [history, references] = await Promise.all([shipments.history(id), integrations.externalReferences(id)])
    const content = shipmentPage(context(request, reply), {
      shipment,
      history,
      references,
      fields: shipmentFields,
      values: state.values ?? shipmentFormValues(shipment, shipmentFields, timeZone),
      errors: state.errors ?? {},
      transitionErrors: state.transitionErrors ?? {},
      flash: noticeOf(request),
    })
    return sendPage(request, reply, `Shipment ${shipment.reference}`, content, state.status)
  }

  scope.get<{ Params: { id: string } }>('/shipments/:id', { schema: hide, config: view }, async (request, reply) =>
    renderShipment(request, reply, shipmentId(request.params.id)),
  )

  scope.post<{ Params: { id: string }; Body: Form }>('/shipments/:id', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const current = await shipments.get(id)
    if (!current) throw new ShipmentsErrors.ShipmentNotFound(id)
    const { submitted, update, errors } = readShipmentForm(request.body, shipmentFormValues(current, shipmentFields, timeZone), shipmentFields, timeZone)
    if (Object.keys(errors).length > 0) return renderShipment(request, reply, id, { values: submitted, errors, status: 422 })
    if (Object.keys(update).length === 0) return reply.redirect(`${prefix}/shipments/${id}?notice=unchanged`, 303)
    try {
      await shipments.update(id, update, { userId: String(request.shipmentsAdmin!.user.id) })
    } catch (error) {
      if (error instanceof ShipmentValidationError) return renderShipment(request, reply, id, { values: submitted, errors: formFieldErrors(error.errors), status: 422 })
      if (error instanceof ShipmentUpdateRejectedError) return renderShipment(request, reply, id, { values: submitted, errors: { form: [error.message] }, status: 422 })
      throw error
    }
    return reply.redirect(`${prefix}/shipments/${id}?notice=saved`, 303)
  })

  scope.post<{ Params: { id: string }; Body: Form }>('/shipments/:id/transition', { schema: formSchema, config: transition }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const target = text(request.body.status)
    if (target === '') return renderShipment(request, reply, id, { transitionErrors: { status: ['Choose the new status.'] }, status: 422 })
    let moved: boolean
    try {
      const result = await shipments.update(id, { status: target as ShipmentStatus, statusMessage: text(request.body.statusMessage) || null }, { userId: String(request.shipmentsAdmin!.user.id) })
      moved = result.transition !== null
    } catch (error) {
      if (error instanceof ShipmentValidationError) return renderShipment(request, reply, id, { transitionErrors: formFieldErrors(error.errors), status: 422 })
      if (error instanceof ShipmentUpdateRejectedError) return renderShipment(request, reply, id, { transitionErrors: { form: [error.message] }, status: 422 })
      throw error
    }
    return reply.redirect(`${prefix}/shipments/${id}?notice=${moved ? 'transitioned' : 'unchanged'}`, 303)
  })

  for (const [action, deleted] of [['delete', true], ['restore', false]] as const) {
    scope.post<{ Params: { id: string } }>(`/shipments/:id/${action}`, { schema: formSchema, config: edit }, async (request, reply) => {
      const id = shipmentId(request.params.id)
      await (deleted ? shipments.softDelete(id) : shipments.restore(id))
      return reply.redirect(`${prefix}/shipments/${id}?notice=${deleted ? 'deleted' : 'restored'}`, 303)
    })
  }

  // --- An order's shipments -----------------------------------------------------------------------

  async function orderPanelFor(request: FastifyRequest, reply: FastifyReply, rawId: string, state: { errors?: FieldErrors; count?: string } = {}) {
    const orderId = positiveId(rawId, () => new ShipmentsErrors.OrderNotFound(rawId))
    const order = await orders.findOrder(orderId)
    if (!order) throw new ShipmentsErrors.OrderNotFound(orderId)
    const page = await shipments.list({ orderId, perPage: 100 })
    const panel = orderPanel(context(request, reply), order, page.shipments, { errors: state.errors ?? {}, count: state.count ?? '1', flash: noticeOf(request) })
    return { order, panel }
  }

  scope.get<{ Params: { orderId: string } }>('/orders/:orderId', { schema: hide, config: view }, async (request, reply) => {
    const { order, panel } = await orderPanelFor(request, reply, request.params.orderId)
    return sendPage(request, reply, `Order ${order.reference}`, html`<h1>Order ${order.reference}</h1>${panel}`)
  })

  // The same panel without any layout, for a host to place on its own order screen.
  scope.get<{ Params: { orderId: string } }>('/orders/:orderId/panel', { schema: hide, config: view }, async (request, reply) => {
    const { panel } = await orderPanelFor(request, reply, request.params.orderId)
    return reply.type('text/html; charset=utf-8').send(panel.value)
  })

  scope.post<{ Params: { orderId: string }; Body: Form }>('/orders/:orderId/shipments', { schema: formSchema, config: edit }, async (request, reply) => {
    const raw = text(request.body.count).trim()
    const count = /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN
    if (!(count >= 1 && count <= 100)) {
      const { order, panel } = await orderPanelFor(request, reply, request.params.orderId, { errors: { count: ['Enter a number of shipments from 1 to 100.'] }, count: raw })
      return sendPage(request, reply, `Order ${order.reference}`, html`<h1>Order ${order.reference}</h1>${panel}`, 422)
    }
    const orderId = positiveId(request.params.orderId, () => new ShipmentsErrors.OrderNotFound(request.params.orderId))
    await shipments.create(orderId, { count, userId: String(request.shipmentsAdmin!.user.id) })
    return reply.redirect(`${prefix}/orders/${orderId}?notice=created`, 303)
  })

  // --- Integrations -------------------------------------------------------------------------------

  scope.get('/integrations', { schema: hide, config: manage }, async (request, reply) => {
    const list = await integrations.list()
    return sendPage(request, reply, 'Integrations', integrationListPage(context(request, reply), list, providers.list(), (integration) => integrations.isEnabled(integration)))
  })

  const requireProvider = (id: string): AnyProviderDefinition => {
    const provider = providers.get(id)
    if (!provider) throw AdminBadRequest(`No provider "${id}" is registered.`)
    return provider
  }
  /** An integration whose provider is gone still opens, with no settings to edit. */
  const providerOf = (providerId: string | null): AnyProviderDefinition =>
    providers.get(providerId ?? '') ?? { id: providerId ?? 'none', settingsSchema: Type.Object({}), handleGatewayRequest: async () => ({ status: 404 }) }

  async function renderIntegration(
    request: FastifyRequest,
    reply: FastifyReply,
    handle: string | null,
    provider: AnyProviderDefinition | null,
    state: { values?: IntegrationFormValues; errors?: FieldErrors; check?: ConnectionCheck; status?: number } = {},
  ) {
    const integration = handle === null ? null : await integrations.get(handle)
    if (handle !== null && !integration) throw AdminNotFound(`Integration "${handle}"`)
    const effectiveProvider = provider ?? providerOf(integration!.providerId)
    const content = integrationPage(context(request, reply), {
      integration,
      provider: effectiveProvider,
      values: state.values ?? integrationFormValues(integration, effectiveProvider),
      errors: state.errors ?? {},
      flash: noticeOf(request),
      check: state.check ?? null,
      deliveries: integration ? await integrations.recentDeliveries(integration.handle, 50) : [],
      enabled: integration ? integrations.isEnabled(integration) : true,
    })
    return sendPage(request, reply, integration ? `Integration ${integration.name}` : 'New integration', content, state.status)
  }

  scope.get<{ Querystring: { provider?: string } }>('/integrations/new', { schema: hide, config: manage }, async (request, reply) =>
    renderIntegration(request, reply, null, requireProvider(text(request.query.provider))),
  )

  scope.post<{ Body: Form }>('/integrations', { schema: formSchema, config: manage }, async (request, reply) => {
    const provider = requireProvider(text(request.body.providerId))
    const { values, input } = readIntegrationForm(request.body, provider)
    try {
      const created = await integrations.create({ ...input, providerId: provider.id })
      return reply.redirect(`${prefix}/integrations/${encodeURIComponent(created.handle)}?notice=created`, 303)
    } catch (error) {
      if (!(error instanceof IntegrationConfigError)) throw error
      return renderIntegration(request, reply, null, provider, { values, errors: integrationErrors(error.message), status: 422 })
    }
  })

  scope.get<{ Params: { handle: string } }>('/integrations/:handle', { schema: hide, config: manage }, async (request, reply) =>
    renderIntegration(request, reply, request.params.handle, null),
  )

  scope.post<{ Params: { handle: string }; Body: Form }>('/integrations/:handle', { schema: formSchema, config: manage }, async (request, reply) => {
    const existing = await integrations.get(request.params.handle)
    if (!existing) throw AdminNotFound(`Integration "${request.params.handle}"`)
    const { values, input } = readIntegrationForm(request.body, providerOf(existing.providerId))
    try {
      const saved = await integrations.update(existing.handle, input)
      return reply.redirect(`${prefix}/integrations/${encodeURIComponent(saved.handle)}?notice=saved`, 303)
    } catch (error) {
      if (!(error instanceof IntegrationConfigError)) throw error
      return renderIntegration(request, reply, existing.handle, null, { values, errors: integrationErrors(error.message), status: 422 })
    }
  })

  for (const [action, enabled] of [['enable', true], ['disable', false]] as const) {
    scope.post<{ Params: { handle: string } }>(`/integrations/:handle/${action}`, { schema: formSchema, config: manage }, async (request, reply) => {
      if (!(await integrations.get(request.params.handle))) throw AdminNotFound(`Integration "${request.params.handle}"`)
      await integrations.update(request.params.handle, { enabled })
      return reply.redirect(`${prefix}/integrations/${encodeURIComponent(request.params.handle)}?notice=${enabled ? 'enabled' : 'disabled'}`, 303)
    })
  }

  scope.post<{ Params: { handle: string } }>('/integrations/:handle/check', { schema: formSchema, config: manage }, async (request, reply) => {
    if (!(await integrations.get(request.params.handle))) throw AdminNotFound(`Integration "${request.params.handle}"`)
    let check: ConnectionCheck
    try {
      check = await integrations.checkConnection(request.params.handle)
    } catch (error) {
      request.log.warn({ err: error, integration: request.params.handle }, 'Connection check failed')
      check = { ok: false, message: error instanceof IntegrationError ? error.message : 'The check could not run; the log has the details.' }
    }
    return renderIntegration(request, reply, request.params.handle, null, { check })
  })

  // --- Outbound webhooks --------------------------------------------------------------------------

  /** How many of a subscription's deliveries its page lists, newest first. */
  const RECENT_DELIVERIES = 50

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

  // --- ShipStation --------------------------------------------------------------------------------

  scope.get('/shipstation', { schema: hide, config: manage }, async (request, reply) => {
    const exchange = orderExchange
      ? {
          url: `${request.protocol}://${request.host}${options.orderExchangePrefix}/process`,
          settings: orderExchange.settings,
          activity: await orderExchange.activity.recent(100),
        }
      : null
    return sendPage(request, reply, 'ShipStation', shipStationPage(exchange))
  })
}
