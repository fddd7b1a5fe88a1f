// The store admins' pages: an encapsulated scope with its own cookies, form bodies, CSRF tokens,
// security headers and error pages. Every change goes through the package's services.
import { NOTIFICATION_TEMPLATES, type NotificationTemplateName } from '../notifications/templates.js'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifyFormbody from '@fastify/formbody'
import fastifyCsrfProtection from '@fastify/csrf-protection'
import { Type } from '@sinclair/typebox'
import {
  DeliveryErrors,
  ReturnErrors,
  IntegrationConfigError,
  IntegrationError,
  NotificationConfigError,
  ShipmentsErrors,
  ShipmentUpdateRejectedError,
  ShipmentValidationError,
  WebhookSubscriptionError,
} from '../errors.js'
import type { HasPermission, ResolveUser, ShipmentsUser } from '../options.js'
import type { ShipmentService } from '../shipments/service.js'
import type { AllocatedLine } from '../shipments/attention.js'
import { BUILT_IN_SPLIT_RULES, type SplitRule } from '../shipments/items.js'
import { isShipmentStatus, type ShipmentStatus } from '../shipments/shipment.js'
import type { IntegrationService } from '../gateway/integrations.js'
import type { AnyProviderDefinition, ConnectionCheck, ProviderRegistry } from '../gateway/providers.js'
import type { OrderStore } from '../orders/order-store.js'
import type { ReturnService } from '../returns/service.js'
import { RETURN_STATES, type ReturnState } from '../returns/return.js'
import { orderReturnsSection, returnListPage, returnPage } from './return-pages.js'
import type { OrderExchangeService } from '../order-exchange/service.js'
import type { NotificationService } from '../notifications/service.js'
import type { TrackingLinks } from '../notifications/tracking-links.js'
import { shortError } from '../outbox/dispatcher.js'
import type { ShipmentFieldDefinition } from '../shipments/field-layout.js'
import type { ShipmentsOverviewQuery } from '../shipments/overview.js'
import { overviewPage } from './overview-page.js'
import { boxCataloguePage, parcelsSection, SHIP_FROM_FIELDS } from './parcel-pages.js'
import type { PostalAddress } from '../orders/order-store.js'
import type { DeliveryService, RateQuote } from '../deliveries/service.js'
import type { BoxService } from '../deliveries/boxes.js'
import type { DocumentService } from '../documents/service.js'
import { ShipmentsPermissions } from '../shipments/routes.js'
import { html, type SafeHtml } from '../html.js'
import { notice, standaloneLayout, STATUS_LABELS, type FieldErrors } from './components.js'
import type { AdminPage, ResolvedAdminOptions } from './options.js'
import {
  formFieldErrors,
  orderDetails,
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
import {
  emptyNotificationForm,
  notificationFormValues,
  notificationListPage,
  notificationPage,
  readNotificationForm,
  trackingLinkSection,
  type NotificationFormValues,
  type NotificationTestResult,
  type NotificationTestValues,
} from './notification-pages.js'
import type { WebhookService, WebhookSubscription } from '../outbox/webhooks.js'
import { emptyWebhookForm, readWebhookForm, webhookErrors, webhookListPage, webhookPage, type WebhookFormValues } from './webhook-pages.js'
import {
  attentionPage,
  itemEditorLines,
  readItemQuantities,
  shipmentItemValues,
  suggestByRule,
  type StagingState,
} from './line-item-pages.js'

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
  /** Why ship notifications cannot store tracking numbers (missingTrackingFields; empty for a host order store). */
  trackingFieldProblems: readonly string[]
  /** Where the gateway is mounted, for the URL an integration page gives to paste into the sending service. */
  gatewayPrefix: string
  /** The overview page's figures. */
  overview: ShipmentsOverviewQuery
  resolveUser: ResolveUser
  hasPermission: HasPermission
  timeZone: string
  shipmentFields: ShipmentFieldDefinition[]
  /** The host's split rules by name, offered beside the built-in ones on the order page. */
  splitRules: Readonly<Record<string, SplitRule>>
  notifications: NotificationService
  /** null without the `trackingPage` option: the shipment page shows no public link. */
  trackingLinks: Pick<TrackingLinks, 'url' | 'revoke'> | null
  /** Parcels, rates and labels; the box catalogue and suggestions. */
  deliveries: DeliveryService
  boxes: BoxService
  /** Returns: the list, a return's page, the order page's returns section. */
  returns: ReturnService
  /** The plugin's clock (the returns list's age filter). */
  clock: () => number
  /** Packing slips, pick lists and labels (PDF), for the shipment page's and the list's print buttons. */
  documents: DocumentService
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

/**
 * The cookie holding the admin pages' CSRF secret (path: the admin prefix). A host clears it at logout
 * (`reply.clearCookie(ADMIN_CSRF_COOKIE, { path: prefix })`), so the next login starts with a new secret.
 */
export const ADMIN_CSRF_COOKIE = 'shipments_admin_csrf'

const ASSETS = {
  'admin.css': { type: 'text/css; charset=utf-8', body: readFileSync(new URL('../../assets/admin/admin.css', import.meta.url)) },
  'admin.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('../../assets/admin/admin.js', import.meta.url)) },
  'overview.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(new URL('../../assets/admin/overview.js', import.meta.url)) },
}

let chartScript: Buffer | null = null
/**
 * Chart.js's UMD build from the installed package (a dependency, so it comes with the package: no CDN,
 * no copy kept in assets/), read on first use. Its `exports` name no UMD file: it sits beside the
 * CommonJS entry. The source map it names is not served, so its comment goes.
 */
function chartJs(): Buffer {
  chartScript ??= Buffer.from(
    readFileSync(join(dirname(createRequire(import.meta.url).resolve('chart.js')), 'chart.umd.min.js'), 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'),
  )
  return chartScript
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
  nothingLeft: 'Nothing is left to allocate: no shipment was created.',
  notRedelivered: 'Not redelivered: the delivery is still pending.',
  notificationDeleted: 'Notification deleted.',
  templateAdded: 'Added, disabled: read it, then enable it.',
  linkRevoked: 'Tracking link revoked: every earlier link answers 404. The link below is the new one.',
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
  const { admin, shipments, integrations, webhooks, providers, orders, orderExchange, resolveUser, hasPermission, timeZone, shipmentFields, splitRules, notifications, trackingLinks } = options
  const prefix = admin.prefix
  // The attention list needs the order store's lines; without them its page says so and the navigation leaves it out.
  const storeHasLines = Boolean(orders.orderLines && orders.listCompletedOrders)

  // Cookies (for the CSRF secret): the host's @fastify/cookie when it has one, else the package's own,
  // in this scope only. No session library is required of the host.
  if (!scope.hasRequestDecorator('cookies')) await scope.register(fastifyCookie)
  // Forms: the host's parser when it registered one for every route, else the package's, here only.
  if (!scope.hasContentTypeParser('application/x-www-form-urlencoded')) await scope.register(fastifyFormbody, { bodyLimit: 262_144 })
  await scope.register(fastifyCsrfProtection, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: ADMIN_CSRF_COOKIE,
    cookieOpts: { path: prefix, sameSite: 'strict', httpOnly: true, secure: 'auto' },
    // Tokens are bound to the user (an HMAC with the key), so a token made for one user fails for
    // another, and to the host's login session when it names one, so a token dies with its session.
    getUserInfo: (request) => csrfUserInfo(request),
    csrfOpts: { hmacKey: admin.csrfKey ?? randomBytes(32).toString('base64'), userInfo: true },
  })

  scope.decorateRequest('shipmentsAdmin', null)
  // The user's id, and the session's identifier after a NUL (which neither may hold) when the host names one.
  const csrfUserInfo = (request: FastifyRequest) => {
    const userId = String(request.shipmentsAdmin?.user.id ?? '')
    const session = admin.csrfSession?.(request)
    // A promise (an async hook) would bind every session to the same text, silently: refused (a 500).
    if (session != null && typeof session !== 'string') throw new TypeError('admin.csrfSession must return a string, null or undefined (synchronously)')
    return session ? `${userId}\u0000${session}` : userId
  }

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
    const [view, edit, transition, manage, buyLabels, manageReturns] = await Promise.all([
      may(ShipmentsPermissions.viewShipments),
      may(ShipmentsPermissions.editShipments),
      may(ShipmentsPermissions.transitionShipments),
      may(ShipmentsPermissions.manageIntegrations),
      may(ShipmentsPermissions.buyLabels),
      may(ShipmentsPermissions.manageReturns),
    ])
    request.shipmentsAdmin = { user, can: { view, edit, transition, manage, buyLabels, manageReturns } }
    const granted: Record<string, boolean> = {
      [ShipmentsPermissions.viewShipments]: view,
      [ShipmentsPermissions.editShipments]: edit,
      [ShipmentsPermissions.transitionShipments]: transition,
      [ShipmentsPermissions.manageIntegrations]: manage,
      [ShipmentsPermissions.buyLabels]: buyLabels,
      [ShipmentsPermissions.manageReturns]: manageReturns,
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
    return { prefix, csrf: reply.generateCsrf({ userInfo: csrfUserInfo(request) }), can: state.can, timeZone }
  }

  const navigationFor = async (request: FastifyRequest): Promise<AdminPage['navigation']> => {
    const can = request.shipmentsAdmin?.can
    const links: Array<{ label: string; href: string; count?: number }> = can?.view ? [{ label: 'Overview', href: `${prefix}/overview` }] : []
    links.push({ label: 'Shipments', href: `${prefix}/shipments` })
    if (can?.view && storeHasLines) links.push({ label: 'Attention', href: `${prefix}/attention`, count: await attentionCount(request) })
    if (can?.view) links.push({ label: 'Returns', href: `${prefix}/returns`, count: await returnsWaiting(request) })
    if (can?.view) links.push({ label: 'Boxes', href: `${prefix}/boxes` })
    if (can?.manage) {
      links.push(
        { label: 'Integrations', href: `${prefix}/integrations` },
        { label: 'Webhooks', href: `${prefix}/webhooks` },
        { label: 'Notifications', href: `${prefix}/notifications` },
        { label: 'ShipStation', href: `${prefix}/shipstation` },
      )
    }
    const path = request.url.split('?')[0]
    return links.map((link) => ({ ...link, current: path.startsWith(link.href) }))
  }

  /**
   * Returns waiting for action (requested) for the navigation: read by the state index, at most 100
   * (the badge shows 100 then), so a store with many returns costs no more; a failure costs the badge.
   */
  async function returnsWaiting(request: FastifyRequest): Promise<number | undefined> {
    try {
      return (await options.returns.list({ state: 'requested', limit: 100 })).length
    } catch (error) {
      request.log.error({ err: error }, 'The returns count for the admin navigation failed')
      return undefined
    }
  }

  /** The attention list's size for the navigation (the service caches it); a failure costs the badge, never the page. */
  async function attentionCount(request: FastifyRequest): Promise<number | undefined> {
    try {
      return (await shipments.attention({ perPage: 1 })).total
    } catch (error) {
      request.log.error({ err: error }, 'The attention count for the admin navigation failed')
      return undefined
    }
  }

  const head = html`<link rel="stylesheet" href="${prefix}/assets/admin.css"><script src="${prefix}/assets/admin.js" defer></script>`.value

  /** Sends a page inside the host's layout (or the standalone one). */
  async function sendPage(request: FastifyRequest, reply: FastifyReply, title: string, content: SafeHtml, status = 200) {
    const state = request.shipmentsAdmin
    const wrapped = html`<div class="shipments-admin">${content}</div>`.value
    const page: AdminPage | null = state
      ? { title, head, content: wrapped, navigation: await navigationFor(request), user: state.user, request }
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
  const buyLabels = { shipmentsAdminPermission: ShipmentsPermissions.buyLabels }
  const hide = { hide: true }
  const formSchema = { hide: true, body: FormBody }

  // --- Assets -------------------------------------------------------------------------------------

  scope.get<{ Params: { file: string } }>('/assets/:file', { schema: hide }, async (request, reply) => {
    const { file } = request.params
    const asset = file === 'chart.umd.js' ? { type: 'text/javascript; charset=utf-8', body: chartJs() } : Object.hasOwn(ASSETS, file) ? ASSETS[file as keyof typeof ASSETS] : null
    if (!asset) throw AdminNotFound('Asset')
    return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body)
  })

  // --- Shipments ----------------------------------------------------------------------------------

  scope.get('/', { schema: hide, config: view }, async (_request, reply) => reply.redirect(`${prefix}/overview`, 303))

  /**
   * Order references by order id: one `findOrders` call when the store has it, else one `findOrder` per
   * order. An order the store no longer knows, or a failing lookup (logged), shows as `#id`.
   */
  async function orderReferencesOf(request: FastifyRequest, orderIds: Iterable<number>): Promise<Map<number, string>> {
    const asked = new Set(orderIds)
    const ids = [...asked]
    const failed = (error: unknown) => {
      request.log.error({ err: error, orderIds: ids }, 'An order lookup for an admin page failed; the page shows the order ids')
      return []
    }
    const findOrders = orders.findOrders?.bind(orders)
    const found = ids.length === 0 ? [] : findOrders ? await findOrders(ids).catch(failed) : await Promise.all(ids.map((id) => orders.findOrder(id).catch(failed)))
    return new Map(found.flat().flatMap((order) => (order && asked.has(order.id) ? [[order.id, order.reference] as const] : [])))
  }

  /** Display names of these users (`admin.userName`); one that fails (logged) or answers null keeps its id. */
  async function userNamesOf(request: FastifyRequest, userIds: Iterable<string>): Promise<Map<string, string>> {
    const names = new Map<string, string>()
    const userName = admin.userName
    if (!userName) return names
    await Promise.all(
      [...new Set(userIds)].map(async (userId) => {
        try {
          const name = await userName(userId)
          if (typeof name === 'string' && name.trim() !== '') names.set(userId, name)
        } catch (error) {
          request.log.error({ err: error, userId }, 'admin.userName failed; the history shows the user id')
        }
      }),
    )
    return names
  }

  scope.get('/overview', { schema: hide, config: view }, async (request, reply) => {
    const figures = await options.overview()
    // Webhooks and ShipStation are the integration managers' pages: their sections show to them only.
    const manages = request.shipmentsAdmin!.can.manage
    const [orderReferences, subscriptions, lastExport] = await Promise.all([
      orderReferencesOf(request, figures.late.shipments.map((shipment) => shipment.orderId)),
      manages ? webhooks.list() : null,
      manages && orderExchange ? orderExchange.activity.newest('export') : null,
    ])
    const content = overviewPage(context(request, reply), {
      figures,
      orderReferences,
      failingWebhooks: subscriptions?.filter((subscription) => !subscription.enabled || subscription.failureCount > 0) ?? null,
      shipStation: manages ? { configured: orderExchange !== null, lastExport } : null,
    })
    return sendPage(request, reply, 'Overview', content)
  })

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
      : await shipments.list({
          status: filters.status || undefined,
          orderId,
          search: filters.q || undefined,
          page: pageNumber,
          afterId: /^\d{1,10}$/.test(text(query.after)) ? Number(text(query.after)) : undefined,
          perPage: 50,
        })
    const orderReferences = await orderReferencesOf(request, page.shipments.map((shipment) => shipment.orderId))
    return sendPage(request, reply, 'Shipments', shipmentListPage(context(request, reply), page, filters, { orderNotFound, bulk, orderReferences }), status)
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
    state: {
      values?: Record<string, string>
      errors?: FieldErrors
      transitionErrors?: FieldErrors
      itemValues?: Record<string, string>
      itemErrors?: FieldErrors
      parcelErrors?: FieldErrors
      parcelValues?: Record<string, string>
      quotes?: { parcelId: number; quotes: RateQuote[] }
      status?: number
    } = {},
  ) {
    const shipment = await shipments.get(id)
    if (!shipment) throw new ShipmentsErrors.ShipmentNotFound(id)
    const [history, checkpoints, references, lines, orderReferences] = await Promise.all([
      shipments.history(id),
      shipments.checkpoints(id),
      integrations.externalReferences(id),
      orderLinesOf(shipment.orderId),
      orderReferencesOf(request, [shipment.orderId]),
    ])
    const userNames = await userNamesOf(request, history.flatMap((entry) => (entry.userId ? [entry.userId] : [])))
    const editorLines = lines || shipment.items.length > 0 ? itemEditorLines(lines ?? [], shipment) : null
    // One context per page: on a first visit each token made would come with a new secret, and only the last one's cookie is kept.
    const pageContext = context(request, reply)
    const content = shipmentPage(pageContext, {
      shipment,
      history,
      checkpoints,
      references,
      fields: shipmentFields,
      values: state.values ?? shipmentFormValues(shipment, shipmentFields, timeZone),
      errors: state.errors ?? {},
      transitionErrors: state.transitionErrors ?? {},
      items: editorLines
        ? { lines: editorLines, values: state.itemValues ?? shipmentItemValues(editorLines, shipment), errors: state.itemErrors ?? {} }
        : null,
      flash: noticeOf(request),
      trackingLink: trackingLinks ? trackingLinkSection(pageContext, shipment, await trackingLinks.url(id)) : null,
      orderReference: orderReferences.get(shipment.orderId) ?? null,
      userNames,
      parcels: parcelsSection(pageContext, {
        shipmentId: id,
        parcels: shipment.parcels,
        labelIntegrations: (await integrations.list())
          .filter((integration) => integrations.isEnabled(integration) && options.providers.get(integration.providerId ?? '')?.deliveries)
          .map((integration) => integration.handle),
        quotes: state.quotes ?? null,
        errors: state.parcelErrors ?? {},
        values: state.parcelValues ?? {},
      }),
    })
    return sendPage(request, reply, `Shipment ${shipment.reference}`, content, state.status)
  }

  scope.get<{ Params: { id: string } }>('/shipments/:id', { schema: hide, config: view }, async (request, reply) =>
    renderShipment(request, reply, shipmentId(request.params.id)),
  )

  /** A PDF to the browser, opened in its viewer; the name carries no text of the store's. */
  const sendPdf = (reply: FastifyReply, bytes: Buffer, name: string) =>
    reply.header('content-type', 'application/pdf').header('content-disposition', `inline; filename="${name}"`).header('cache-control', 'private, no-store').send(bytes)

  scope.get<{ Params: { id: string } }>('/shipments/:id/packing-slip', { schema: hide, config: view }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    return sendPdf(reply, await options.documents.packingSlip(id), `packing-slip-${id}.pdf`)
  })

  // The list's print buttons post the selected ids (a POST: the CSRF token never lands in a URL).
  const documentKinds = { 'pick-list': 'pickList', 'packing-slips': 'packingSlips', labels: 'labels' } as const
  scope.post<{ Params: { kind: string }; Body: Form }>('/shipments/documents/:kind', { schema: formSchema, config: view }, async (request, reply) => {
    const kind = Object.hasOwn(documentKinds, request.params.kind) ? documentKinds[request.params.kind as keyof typeof documentKinds] : null
    if (!kind) throw AdminBadRequest('Unknown document.')
    const raw = Array.isArray(request.body.ids) ? request.body.ids : [request.body.ids ?? '']
    const ids = [...new Set(raw.filter((id) => /^[1-9]\d{0,9}$/.test(id)).map(Number))]
    if (ids.length === 0) throw AdminBadRequest('Select at least one shipment.')
    if (ids.length > options.documents.maxBatchSize) throw AdminBadRequest(`Print at most ${options.documents.maxBatchSize} shipments at a time.`)
    return sendPdf(reply, await options.documents[kind](ids), `${request.params.kind}-${ids.length}-shipments.pdf`)
  })

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

  // Parcels and labels: each form posts here and comes back to the shipment page, with the refusal
  // (the carrier's own words included) beside the form that caused it.
  const parcelId = (raw: string) => positiveId(raw, () => new DeliveryErrors.ParcelNotFound(raw))
  const refusalOf = (error: unknown): string | null => {
    if (error instanceof ShipmentUpdateRejectedError) return error.message
    if (error instanceof ShipmentValidationError) return Object.entries(error.errors).map(([name, messages]) => `${name}: ${messages.join(' ')}`).join('; ')
    const status = (error as { statusCode?: unknown })?.statusCode
    return typeof status === 'number' && status >= 400 && status < 500 && status !== 404 ? (error as Error).message : status === 503 ? (error as Error).message : null
  }
  const adminUserId = (request: FastifyRequest) => String(request.shipmentsAdmin!.user.id)

  scope.post<{ Params: { id: string }; Body: Form }>('/shipments/:id/parcels', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const values = { 'parcel.weight': text(request.body['parcel.weight']), 'parcel.weightUnit': text(request.body['parcel.weightUnit']) }
    try {
      await options.deliveries.addParcel(id, { weight: { value: values['parcel.weight'], unit: values['parcel.weightUnit'] } }, { userId: adminUserId(request) })
    } catch (error) {
      if (error instanceof ShipmentValidationError) {
        const parcelErrors: FieldErrors = {}
        for (const [name, messages] of Object.entries(error.errors)) (parcelErrors[name === 'weight.value' ? 'parcel.weight' : name === 'weight.unit' ? 'parcel.weightUnit' : `parcel.${name}`] ??= []).push(...messages)
        return renderShipment(request, reply, id, { parcelErrors, parcelValues: values, status: 422 })
      }
      const refusal = refusalOf(error)
      if (refusal) return renderShipment(request, reply, id, { parcelErrors: { 'parcel.form': [refusal] }, parcelValues: values, status: 422 })
      throw error
    }
    return reply.redirect(`${prefix}/shipments/${id}?notice=saved#parcels`, 303)
  })

  // A parcel's weight and size changed, or the parcel removed (while it has no label): a refusal shows
  // in the parcel's own form, with what was typed.
  scope.post<{ Params: { id: string; parcelId: string }; Body: Form }>('/shipments/:id/parcels/:parcelId/change', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const parcel = parcelId(request.params.parcelId)
    const key = (name: string) => `edit.${parcel}.${name}`
    const values = Object.fromEntries(['weight', 'weightUnit', 'length', 'width', 'height', 'dimensionUnit'].map((name) => [key(name), text(request.body[key(name)]).trim()]))
    const sized = [values[key('length')], values[key('width')], values[key('height')]].some((value) => value !== '')
    const change = {
      weight: { value: values[key('weight')]!, unit: values[key('weightUnit')] as 'kg' },
      dimensions: sized ? { length: values[key('length')]!, width: values[key('width')]!, height: values[key('height')]!, unit: values[key('dimensionUnit')] as 'cm' } : null,
    }
    try {
      await options.deliveries.updateParcel(id, parcel, change, { userId: adminUserId(request) })
    } catch (error) {
      if (error instanceof ShipmentValidationError) {
        const parcelErrors: FieldErrors = {}
        for (const [name, messages] of Object.entries(error.errors)) {
          // The service names weight.value, dimensions.width...: the form's fields are flat.
          const flat = name === 'weight.value' ? 'weight' : name === 'weight.unit' ? 'weightUnit' : name === 'dimensions.unit' ? 'dimensionUnit' : name.replace(/^dimensions\./, '')
          ;(parcelErrors[key(['weight', 'weightUnit', 'length', 'width', 'height', 'dimensionUnit'].includes(flat) ? flat : 'form')] ??= []).push(...messages)
        }
        return renderShipment(request, reply, id, { parcelErrors, parcelValues: values, status: 422 })
      }
      const refusal = refusalOf(error)
      if (refusal) return renderShipment(request, reply, id, { parcelErrors: { [key('form')]: [refusal] }, parcelValues: values, status: 422 })
      throw error
    }
    return reply.redirect(`${prefix}/shipments/${id}?notice=saved#parcels`, 303)
  })
  scope.post<{ Params: { id: string; parcelId: string }; Body: Form }>('/shipments/:id/parcels/:parcelId/remove', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const parcel = parcelId(request.params.parcelId)
    try {
      await options.deliveries.removeParcel(id, parcel, { userId: adminUserId(request) })
    } catch (error) {
      const refusal = refusalOf(error)
      if (refusal) return renderShipment(request, reply, id, { parcelErrors: { [`edit.${parcel}.form`]: [refusal] }, status: 422 })
      throw error
    }
    return reply.redirect(`${prefix}/shipments/${id}?notice=saved#parcels`, 303)
  })

  scope.post<{ Params: { id: string }; Body: Form }>('/shipments/:id/parcels/suggest', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const suggestion = await options.boxes.suggestParcels(id, { apply: true }, { userId: adminUserId(request) })
    if (suggestion.created.length === 0 || suggestion.unpacked.length > 0) {
      const reasons = suggestion.unpacked.map((item) => `${item.quantity} of line ${item.lineItemId}: ${item.reason}`)
      const message = `${suggestion.created.length} parcel${suggestion.created.length === 1 ? '' : 's'} added.${reasons.length > 0 ? ` Left out: ${reasons.join('; ')}.` : ''}`
      return renderShipment(request, reply, id, { parcelErrors: { 'parcel.form': [message] }, status: suggestion.created.length === 0 ? 422 : 200 })
    }
    return reply.redirect(`${prefix}/shipments/${id}?notice=saved#parcels`, 303)
  })

  scope.post<{ Params: { id: string; parcelId: string }; Body: Form }>('/shipments/:id/parcels/:parcelId/rates', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const parcel = parcelId(request.params.parcelId)
    try {
      const quotes = await options.deliveries.quoteRates(id, parcel, { integration: text(request.body.integration) })
      return renderShipment(request, reply, id, { quotes: { parcelId: parcel, quotes } })
    } catch (error) {
      const refusal = refusalOf(error)
      if (refusal) return renderShipment(request, reply, id, { parcelErrors: { [`label.${parcel}`]: [refusal] }, status: 422 })
      throw error
    }
  })

  for (const action of ['label', 'void'] as const) {
    scope.post<{ Params: { id: string; parcelId: string }; Body: Form }>(`/shipments/:id/parcels/:parcelId/${action}`, { schema: formSchema, config: buyLabels }, async (request, reply) => {
      const id = shipmentId(request.params.id)
      const parcel = parcelId(request.params.parcelId)
      try {
        if (action === 'void') await options.deliveries.voidLabel(id, parcel, { userId: adminUserId(request) })
        else {
          const quoteId = Number(text(request.body.quoteId))
          await options.deliveries.buyLabel(id, parcel, { integration: text(request.body.integration), quoteId: Number.isSafeInteger(quoteId) && quoteId > 0 ? quoteId : undefined, carrier: text(request.body.carrier) || undefined, service: text(request.body.service) || undefined }, { userId: adminUserId(request) })
        }
      } catch (error) {
        const refusal = refusalOf(error)
        if (refusal) return renderShipment(request, reply, id, { parcelErrors: { [`label.${parcel}`]: [refusal] }, status: 422 })
        throw error
      }
      return reply.redirect(`${prefix}/shipments/${id}?notice=saved#parcels`, 303)
    })
  }

  // Returns: the list by state and age (paged by key), a return's page and its actions, all through the returns service.
  const returnsManager = { shipmentsAdminPermission: ShipmentsPermissions.manageReturns }
  const returnId = (raw: string) => positiveId(raw, () => new ReturnErrors.ReturnNotFound(raw))
  scope.get('/returns', { schema: hide, config: view }, async (request, reply) => {
    const query = request.query as Record<string, unknown>
    const state = text(query.state)
    if (state !== '' && !(RETURN_STATES as readonly string[]).includes(state)) throw AdminBadRequest(`No return state "${state}".`)
    const olderThanDays = text(query.olderThanDays).trim()
    if (olderThanDays !== '' && !/^\d{1,4}$/.test(olderThanDays)) throw AdminBadRequest('Days must be a whole number.')
    const beforeRaw = text(query.beforeId)
    const beforeId = /^[1-9]\d{0,9}$/.test(beforeRaw) ? Number(beforeRaw) : undefined
    const limit = 50
    const returns = await options.returns.list({
      state: (state || undefined) as ReturnState | undefined,
      createdBefore: olderThanDays === '' ? undefined : new Date(options.clock() - Number(olderThanDays) * 86_400_000),
      beforeId,
      limit,
    })
    const content = returnListPage(context(request, reply), { returns, state, olderThanDays, nextBeforeId: returns.length === limit ? returns[returns.length - 1]!.id : null, flash: noticeOf(request) })
    return sendPage(request, reply, 'Returns', content)
  })

  async function renderReturn(request: FastifyRequest, reply: FastifyReply, id: number, errors: FieldErrors = {}, status = 200) {
    const entry = await options.returns.get(id)
    if (!entry) throw new ReturnErrors.ReturnNotFound(id)
    const labelIntegrations = (await integrations.list())
      .filter((integration) => integrations.isEnabled(integration) && options.providers.get(integration.providerId ?? '')?.deliveries)
      .map((integration) => integration.handle)
    const content = returnPage(context(request, reply), { entry, history: await options.returns.history(id), labelIntegrations, errors, flash: noticeOf(request) })
    return sendPage(request, reply, `Return ${entry.reference}`, content, status)
  }
  scope.get<{ Params: { id: string } }>('/returns/:id', { schema: hide, config: view }, async (request, reply) => renderReturn(request, reply, returnId(request.params.id)))

  /**
   * Runs a return action; a refusal (422, 409) shows on the return's page, beside its form: beside the
   * form's field when `fields` names the form field of the service's field, else under `errorKey`.
   */
  async function returnAction(request: FastifyRequest, reply: FastifyReply, id: number, errorKey: string, action: () => Promise<unknown>, fields: Readonly<Record<string, string>> = {}) {
    try {
      await action()
    } catch (error) {
      if (error instanceof ShipmentValidationError) {
        const errors: FieldErrors = {}
        for (const [name, messages] of Object.entries(error.errors)) (errors[name === 'message' ? errorKey : name.startsWith('line') ? name : Object.hasOwn(fields, name) ? fields[name]! : errorKey] ??= []).push(...messages)
        return renderReturn(request, reply, id, errors, 422)
      }
      const refusal = refusalOf(error)
      if (refusal) return renderReturn(request, reply, id, { [errorKey]: [refusal] }, 422)
      throw error
    }
    return reply.redirect(`${prefix}/returns/${id}?notice=saved`, 303)
  }
  const returnContext = (request: FastifyRequest) => ({ userId: adminUserId(request), source: 'admin' })
  scope.post<{ Params: { id: string }; Body: Form }>('/returns/:id/state', { schema: formSchema, config: returnsManager }, async (request, reply) => {
    const id = returnId(request.params.id)
    const state = text(request.body.state)
    return returnAction(request, reply, id, state === 'rejected' ? 'message.rejected' : 'form', () =>
      options.returns.update(id, { state: state as ReturnState, message: text(request.body.message).trim() || null }, returnContext(request)),
    )
  })
  scope.post<{ Params: { id: string }; Body: Form }>('/returns/:id/tracking', { schema: formSchema, config: returnsManager }, async (request, reply) => {
    const id = returnId(request.params.id)
    return returnAction(request, reply, id, 'trackingNumber', () =>
      options.returns.update(id, { trackingNumber: text(request.body.trackingNumber).trim(), carrier: text(request.body.carrier).trim() || null }, returnContext(request)),
      { carrier: 'carrier' },
    )
  })
  scope.post<{ Params: { id: string }; Body: Form }>('/returns/:id/receive', { schema: formSchema, config: returnsManager }, async (request, reply) => {
    const id = returnId(request.params.id)
    const entry = await options.returns.get(id)
    if (!entry) throw new ReturnErrors.ReturnNotFound(id)
    const count = (name: string) => {
      const raw = text(request.body[name]).trim()
      return /^\d{1,9}$/.test(raw) ? Number(raw) : -1
    }
    const lines = entry.lines.map((line) => ({ lineItemId: line.lineItemId, resellable: count(`resellable.${line.lineItemId}`), damaged: count(`damaged.${line.lineItemId}`), missing: count(`missing.${line.lineItemId}`) }))
    return returnAction(request, reply, id, 'lines', () => options.returns.receive(id, { lines }, returnContext(request)))
  })
  scope.post<{ Params: { id: string }; Body: Form }>('/returns/:id/label', { schema: formSchema, config: buyLabels }, async (request, reply) => {
    const id = returnId(request.params.id)
    if (!request.shipmentsAdmin!.can.manageReturns) throw new ShipmentsErrors.Forbidden(ShipmentsPermissions.manageReturns)
    const body = request.body
    return returnAction(request, reply, id, 'label', () =>
      options.returns.buyLabel(
        id,
        { integration: text(body.integration), carrier: text(body.labelCarrier).trim(), service: text(body.service).trim(), weight: { value: text(body.weight).trim(), unit: text(body.weightUnit) } },
        returnContext(request),
      ),
      { integration: 'integration', carrier: 'labelCarrier', service: 'service', weight: 'weight', 'weight.value': 'weight', 'weight.unit': 'weightUnit' },
    )
  })

  // The box catalogue: the weights and sizes as typed (exact decimals), every problem beside its field.
  async function renderBoxes(request: FastifyRequest, reply: FastifyReply, state: { values?: Record<string, string>; errors?: FieldErrors; status?: number } = {}) {
    const [boxes, shipFrom] = await Promise.all([options.boxes.listBoxes(), options.deliveries.shipFrom()])
    const stored = Object.fromEntries(SHIP_FROM_FIELDS.map(([name]) => [`shipFrom.${name}`, String(shipFrom.address?.[name] ?? '')]))
    const content = boxCataloguePage(context(request, reply), {
      boxes,
      values: state.values ?? {},
      errors: state.errors ?? {},
      flash: noticeOf(request),
      // A refused address shows as typed, beside its errors; otherwise the one in force.
      shipFrom: { values: { ...stored, ...state.values }, source: shipFrom.source },
    })
    return sendPage(request, reply, 'Boxes', content, state.status)
  }
  scope.get('/boxes', { schema: hide, config: view }, async (request, reply) => renderBoxes(request, reply))
  /**
   * Adds a box (boxId null) or changes one from its form: the fields of a box's own form are named
   * `box.<id>.<field>`, so a refusal shows beside that box's fields with what was typed.
   */
  async function saveBox(request: FastifyRequest<{ Body: Form }>, reply: FastifyReply, boxId: number | null) {
    const fieldPrefix = boxId === null ? '' : `box.${boxId}.`
    const names = ['name', 'length', 'width', 'height', 'dimensionUnit', 'emptyWeight', 'maxWeight', 'weightUnit']
    const values = Object.fromEntries(names.map((name) => [`${fieldPrefix}${name}`, text(request.body[`${fieldPrefix}${name}`])]))
    const value = (name: string) => values[`${fieldPrefix}${name}`]!
    const input = {
      name: value('name'),
      innerDimensions: { length: value('length'), width: value('width'), height: value('height'), unit: value('dimensionUnit') as 'cm' },
      emptyWeight: { value: value('emptyWeight'), unit: value('weightUnit') as 'g' },
      maxWeight: { value: value('maxWeight'), unit: value('weightUnit') as 'g' },
    }
    try {
      if (boxId === null) await options.boxes.createBox(input)
      else await options.boxes.updateBox(boxId, input)
    } catch (error) {
      if (!(error instanceof ShipmentValidationError)) throw error
      // The service names `innerDimensions.length`, `maxWeight.value`...: the form's fields are flat.
      const errors: FieldErrors = {}
      for (const [name, messages] of Object.entries(error.errors)) {
        const flat = name.replace(/^innerDimensions\.(length|width|height)$/, '$1').replace(/^innerDimensions\.unit$/, 'dimensionUnit').replace(/^(emptyWeight|maxWeight)\.value$/, '$1').replace(/^(emptyWeight|maxWeight)\.unit$/, 'weightUnit')
        ;(errors[`${fieldPrefix}${flat}`] ??= []).push(...messages)
      }
      return renderBoxes(request, reply, { values, errors, status: 422 })
    }
    return reply.redirect(`${prefix}/boxes?notice=${boxId === null ? 'created' : 'saved'}`, 303)
  }
  scope.post<{ Body: Form }>('/boxes', { schema: formSchema, config: edit }, async (request, reply) => saveBox(request, reply, null))
  scope.post<{ Params: { boxId: string }; Body: Form }>('/boxes/:boxId', { schema: formSchema, config: edit }, async (request, reply) =>
    saveBox(request, reply, positiveId(request.params.boxId, () => new DeliveryErrors.BoxNotFound(request.params.boxId))),
  )
  scope.post<{ Body: Form }>('/boxes/ship-from', { schema: formSchema, config: edit }, async (request, reply) => {
    const values = Object.fromEntries(SHIP_FROM_FIELDS.map(([name]) => [`shipFrom.${name}`, text(request.body[`shipFrom.${name}`])]))
    try {
      await options.deliveries.setShipFrom(Object.fromEntries(SHIP_FROM_FIELDS.map(([name]) => [name, values[`shipFrom.${name}`]])) as unknown as PostalAddress)
    } catch (error) {
      if (!(error instanceof ShipmentValidationError)) throw error
      const errors = Object.fromEntries(Object.entries(error.errors).map(([name, messages]) => [`shipFrom.${name}`, messages]))
      return renderBoxes(request, reply, { values, errors, status: 422 })
    }
    return reply.redirect(`${prefix}/boxes?notice=saved#ship-from`, 303)
  })
  scope.post<{ Params: { boxId: string } }>('/boxes/:boxId/delete', { schema: formSchema, config: edit }, async (request, reply) => {
    await options.boxes.removeBox(positiveId(request.params.boxId, () => new DeliveryErrors.BoxNotFound(request.params.boxId)))
    return reply.redirect(`${prefix}/boxes?notice=saved`, 303)
  })

  // The items editor: quantities per line of the order replace the shipment's items (0 removes a line).
  scope.post<{ Params: { id: string }; Body: Form }>('/shipments/:id/items', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const current = await shipments.get(id)
    if (!current) throw new ShipmentsErrors.ShipmentNotFound(id)
    const lines = itemEditorLines((await orderLinesOf(current.orderId)) ?? [], current)
    const shown = shipmentItemValues(lines, current)
    const { values, items, errors } = readItemQuantities(request.body, Object.keys(shown).map((name) => Number(name.slice('items.'.length))))
    if (Object.keys(errors).length > 0) return renderShipment(request, reply, id, { itemValues: values, itemErrors: errors, status: 422 })
    const held = new Map(current.items.map((item) => [item.lineItemId, item.quantity]))
    if (items.length === held.size && items.every((item) => held.get(item.lineItemId) === item.quantity)) {
      return reply.redirect(`${prefix}/shipments/${id}?notice=unchanged`, 303)
    }
    try {
      await shipments.update(id, { items }, { userId: String(request.shipmentsAdmin!.user.id) })
    } catch (error) {
      if (error instanceof ShipmentValidationError) return renderShipment(request, reply, id, { itemValues: values, itemErrors: error.errors, status: 422 })
      if (error instanceof ShipmentUpdateRejectedError) return renderShipment(request, reply, id, { itemValues: values, itemErrors: { form: [error.message] }, status: 422 })
      throw error
    }
    return reply.redirect(`${prefix}/shipments/${id}?notice=saved`, 303)
  })

  for (const [action, deleted] of [['delete', true], ['restore', false]] as const) {
    scope.post<{ Params: { id: string } }>(`/shipments/:id/${action}`, { schema: formSchema, config: edit }, async (request, reply) => {
      const id = shipmentId(request.params.id)
      await (deleted ? shipments.softDelete(id) : shipments.restore(id))
      return reply.redirect(`${prefix}/shipments/${id}?notice=${deleted ? 'deleted' : 'restored'}`, 303)
    })
  }

  // The public tracking link: revoking raises its version, so every link given out before answers 404.
  scope.post<{ Params: { id: string } }>('/shipments/:id/tracking-link/revoke', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    if (!trackingLinks) throw AdminNotFound('Tracking link')
    if (!(await shipments.get(id))) throw new ShipmentsErrors.ShipmentNotFound(id)
    await trackingLinks.revoke(id)
    return reply.redirect(`${prefix}/shipments/${id}?notice=linkRevoked`, 303)
  })

  // --- An order's shipments -----------------------------------------------------------------------

  /** An order's lines with their allocation; null when the order store gives none (or the order is gone). */
  async function orderLinesOf(orderId: number): Promise<AllocatedLine[] | null> {
    try {
      const { lines } = await shipments.allocation(orderId)
      return lines && lines.length > 0 ? lines : null
    } catch (error) {
      if ((error as { code?: string }).code === 'SHIPMENTS_ORDER_NOT_FOUND') return null
      throw error
    }
  }

  const ruleNames = [...Object.keys(BUILT_IN_SPLIT_RULES), ...Object.keys(splitRules)]
  /** A split rule by name, the host's or a built-in one; own keys only (a rule named `constructor` is no rule). */
  const splitRuleNamed = (name: string): SplitRule | undefined =>
    Object.hasOwn(splitRules, name) ? splitRules[name] : Object.hasOwn(BUILT_IN_SPLIT_RULES, name) ? BUILT_IN_SPLIT_RULES[name as keyof typeof BUILT_IN_SPLIT_RULES] : undefined

  interface OrderPanelState {
    errors?: FieldErrors
    count?: string
    /** The staging form's rule (default `remaining`) and, after a refusal, what was typed. */
    rule?: string
    values?: Record<string, string>
  }

  async function orderPanelFor(request: FastifyRequest, reply: FastifyReply, rawId: string, state: OrderPanelState = {}) {
    const orderId = positiveId(rawId, () => new ShipmentsErrors.OrderNotFound(rawId))
    const { order, lines } = await shipments.allocation(orderId)
    const page = await shipments.list({ orderId, perPage: 100 })
    const errors = state.errors ?? {}
    const panel = orderPanel(context(request, reply), order, page.shipments, {
      errors,
      count: state.count ?? '1',
      flash: noticeOf(request),
      lines: lines && lines.length > 0 ? { lines, staging: staging(request, order, lines, state.rule, state.values, errors) } : null,
    })
    return { order, panel }
  }

  /** The staging form: the rule's suggestion, or what was typed when the service refused it. */
  function staging(
    request: FastifyRequest,
    order: { id: number; reference: string; statusHandle: string | null; isCompleted: boolean },
    lines: AllocatedLine[],
    requested: string | undefined,
    typed: Record<string, string> | undefined,
    errors: FieldErrors,
  ): StagingState {
    // A rule that is not offered (a tampered form) falls back to the default; the service's refusal already says why.
    const rule = requested !== undefined && splitRuleNamed(requested) ? requested : 'remaining'
    let suggestion = { values: {} as Record<string, string>, shipmentsByRule: 0 }
    const shown = { ...errors }
    try {
      suggestion = suggestByRule(splitRuleNamed(rule)!, lines, order)
    } catch (error) {
      // A host rule that throws or answers nonsense: the form stays usable, typed by hand.
      if (!(error instanceof ShipmentValidationError)) request.log.error({ err: error, rule }, 'A split rule failed while pre-filling the admin staging form')
      shown.rule = [...(shown.rule ?? []), `The split rule "${rule}" could not suggest quantities${error instanceof ShipmentValidationError ? `: ${Object.values(error.errors).flat().join(' ')}` : '; the log has the details.'}`]
    }
    return { rule, ruleNames, values: typed ?? suggestion.values, shipmentsByRule: suggestion.shipmentsByRule, errors: shown }
  }

  const sendOrderPage = async (request: FastifyRequest, reply: FastifyReply, state: OrderPanelState = {}, status = 200) => {
    const { order, panel } = await orderPanelFor(request, reply, (request.params as { orderId: string }).orderId, state)
    // No form in the section: no second CSRF token (a second one would replace the first's secret cookie).
    const sectionContext = { prefix, csrf: '', can: request.shipmentsAdmin!.can, timeZone }
    const returnsSection = orderReturnsSection(sectionContext, await options.returns.returnable(order.id), await options.returns.ofOrder(order.id))
    return sendPage(request, reply, `Order ${order.reference}`, html`<h1>Order ${order.reference}</h1>${orderDetails(order)}${panel}${returnsSection}`, status)
  }

  /** The rule a page is asked to pre-fill by; one that is not offered is a 400, as an unknown status filter is. */
  const ruleQuery = (request: FastifyRequest) => {
    const rule = text((request.query as Record<string, unknown>).rule)
    if (rule !== '' && !splitRuleNamed(rule)) throw AdminBadRequest(`No split rule "${rule}".`)
    return rule || undefined
  }

  scope.get<{ Params: { orderId: string } }>('/orders/:orderId', { schema: hide, config: view }, async (request, reply) =>
    sendOrderPage(request, reply, { rule: ruleQuery(request) }),
  )

  // The same panel without any layout, for a host to place on its own order screen.
  scope.get<{ Params: { orderId: string } }>('/orders/:orderId/panel', { schema: hide, config: view }, async (request, reply) => {
    const { panel } = await orderPanelFor(request, reply, request.params.orderId, { rule: ruleQuery(request) })
    return reply.type('text/html; charset=utf-8').send(panel.value)
  })

  // "Create N shipments" (order-level), or the staging form: the typed quantities (`action=items`) or the rule (`action=rule`).
  scope.post<{ Params: { orderId: string }; Body: Form }>('/orders/:orderId/shipments', { schema: formSchema, config: edit }, async (request, reply) => {
    const action = text(request.body.action)
    if (action === 'items' || action === 'rule') return createStaged(request, reply, action)
    const raw = text(request.body.count).trim()
    const count = /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN
    if (!(count >= 1 && count <= 100)) return sendOrderPage(request, reply, { errors: { count: ['Enter a number of shipments from 1 to 100.'] }, count: raw }, 422)
    const orderId = positiveId(request.params.orderId, () => new ShipmentsErrors.OrderNotFound(request.params.orderId))
    await shipments.create(orderId, { count, userId: String(request.shipmentsAdmin!.user.id) })
    return reply.redirect(`${prefix}/orders/${orderId}?notice=created`, 303)
  })

  async function createStaged(request: FastifyRequest<{ Params: { orderId: string }; Body: Form }>, reply: FastifyReply, action: 'items' | 'rule') {
    const orderId = positiveId(request.params.orderId, () => new ShipmentsErrors.OrderNotFound(request.params.orderId))
    const lines = (await shipments.allocation(orderId)).lines ?? []
    const rule = text(request.body.rule) || 'remaining'
    const { values, items, errors } = readItemQuantities(request.body, lines.filter((line) => line.shippable).map((line) => line.id))
    const refuse = (refusal: FieldErrors) => sendOrderPage(request, reply, { rule, values, errors: refusal }, 422)
    if (action === 'items') {
      if (Object.keys(errors).length > 0) return refuse(errors)
      // No quantities would make a whole-order shipment: not what a staging form that lists lines means.
      if (items.length === 0) return refuse({ items: ['Enter a quantity for at least one line.'] })
    }
    let created: unknown[]
    try {
      const userId = String(request.shipmentsAdmin!.user.id)
      created = await shipments.create(orderId, action === 'items' ? { items, userId } : { rule, userId })
    } catch (error) {
      if (error instanceof ShipmentValidationError) return refuse(error.errors)
      throw error
    }
    return reply.redirect(`${prefix}/orders/${orderId}?notice=${created.length > 0 ? 'created' : 'nothingLeft'}`, 303)
  }

  // --- The attention list -------------------------------------------------------------------------

  scope.get('/attention', { schema: hide, config: view }, async (request, reply) => {
    const raw = text((request.query as Record<string, unknown>).page)
    const pageNumber = /^\d{1,9}$/.test(raw) ? Math.max(1, Number(raw)) : 1
    const page = await shipments.attention({ page: pageNumber, perPage: 50 })
    return sendPage(request, reply, 'Orders needing attention', attentionPage(context(request, reply), page, storeHasLines))
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
      gatewayUrl: integration ? `${request.protocol}://${request.host}${options.gatewayPrefix}/handle?integration=${encodeURIComponent(integration.handle)}` : null,
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
      return renderIntegration(request, reply, null, provider, { values, errors: integrationErrors(error.fields), status: 422 })
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
      return renderIntegration(request, reply, existing.handle, null, { values, errors: integrationErrors(error.fields), status: 422 })
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

  // --- Customer notifications ---------------------------------------------------------------------

  scope.get('/notifications', { schema: hide, config: manage }, async (request, reply) =>
    sendPage(request, reply, 'Notifications', notificationListPage(context(request, reply), { notifications: await notifications.list(), canSend: notifications.canSend, flash: noticeOf(request) })),
  )

  const requireNotification = async (raw: string) => {
    const notification = await notifications.get(positiveId(raw, () => AdminNotFound('Notification')))
    if (!notification) throw AdminNotFound('Notification')
    return notification
  }

  /** Shipment references by id, one lookup per distinct shipment (at most a page of deliveries); a shipment gone since is left out. */
  async function shipmentReferencesOf(shipmentIds: Iterable<number>): Promise<Map<number, string>> {
    const found = await Promise.all([...new Set(shipmentIds)].map((id) => shipments.get(id)))
    return new Map(found.flatMap((shipment) => (shipment ? [[shipment.id, shipment.reference] as const] : [])))
  }

  /** Return references by id, as shipmentReferencesOf. */
  async function returnReferencesOf(returnIds: Iterable<number>): Promise<Map<number, string>> {
    const found = await Promise.all([...new Set(returnIds)].map((id) => options.returns.get(id)))
    return new Map(found.flatMap((entry) => (entry ? [[entry.id, entry.reference] as const] : [])))
  }

  /** The return with this reference (its order's reference, `-r`, a number), or null. */
  async function returnByReference(reference: string) {
    const orderReference = /^(.+)-r\d+$/.exec(reference)?.[1]
    const order = orderReference === undefined ? null : await orders.findOrderByReference(orderReference)
    return order ? ((await options.returns.ofOrder(order.id)).find((candidate) => candidate.reference === reference) ?? null) : null
  }

  async function renderNotification(
    request: FastifyRequest,
    reply: FastifyReply,
    id: number | null,
    state: {
      values?: NotificationFormValues
      errors?: FieldErrors
      test?: { values: NotificationTestValues; errors: FieldErrors; result: NotificationTestResult | null }
      status?: number
    } = {},
  ) {
    const notification = id === null ? null : await notifications.get(id)
    if (id !== null && !notification) throw AdminNotFound('Notification')
    const deliveries = notification ? await notifications.deliveries(notification.id, RECENT_DELIVERIES) : []
    const content = notificationPage(context(request, reply), {
      notification,
      values: state.values ?? (notification ? notificationFormValues(notification) : emptyNotificationForm()),
      errors: state.errors ?? {},
      flash: noticeOf(request),
      canSend: notifications.canSend,
      deliveries,
      shipmentReferences: await shipmentReferencesOf(deliveries.flatMap((delivery) => (delivery.shipmentId === null ? [] : [delivery.shipmentId]))),
      returnReferences: await returnReferencesOf(deliveries.flatMap((delivery) => (delivery.returnId === null ? [] : [delivery.returnId]))),
      test: state.test ?? { values: { shipment: '', to: '' }, errors: {}, result: null },
    })
    return sendPage(request, reply, notification ? `Notification ${notification.name}` : 'New notification', content, state.status)
  }

  /** The service's refusal beside the field it names; `id` (the definition deleted meanwhile) is a 404. */
  const notificationErrors = (error: NotificationConfigError): FieldErrors => {
    if (error.field === 'id') throw AdminNotFound('Notification')
    return { [error.field]: [error.message.slice(error.field.length + 2)] }
  }

  scope.get('/notifications/new', { schema: hide, config: manage }, async (request, reply) => renderNotification(request, reply, null))

  scope.post<{ Body: Form }>('/notifications', { schema: formSchema, config: manage }, async (request, reply) => {
    const { values, input } = readNotificationForm(request.body)
    try {
      const created = await notifications.create(input)
      return reply.redirect(`${prefix}/notifications/${created.id}?notice=created`, 303)
    } catch (error) {
      if (!(error instanceof NotificationConfigError)) throw error
      return renderNotification(request, reply, null, { values, errors: notificationErrors(error), status: 422 })
    }
  })

  // A ready-made notification, added disabled: the store admin reads it on its page and enables it there.
  scope.post<{ Params: { template: string } }>('/notifications/templates/:template', { schema: formSchema, config: manage }, async (request, reply) => {
    const name = request.params.template
    if (!Object.hasOwn(NOTIFICATION_TEMPLATES, name)) throw AdminNotFound('Template')
    const created = await notifications.createFromTemplate(name as NotificationTemplateName)
    return reply.redirect(`${prefix}/notifications/${created.id}?notice=templateAdded`, 303)
  })

  scope.get<{ Params: { id: string } }>('/notifications/:id', { schema: hide, config: manage }, async (request, reply) =>
    renderNotification(request, reply, (await requireNotification(request.params.id)).id),
  )

  scope.post<{ Params: { id: string }; Body: Form }>('/notifications/:id', { schema: formSchema, config: manage }, async (request, reply) => {
    const existing = await requireNotification(request.params.id)
    const { values, input } = readNotificationForm(request.body)
    try {
      await notifications.update(existing.id, input)
    } catch (error) {
      if (!(error instanceof NotificationConfigError)) throw error
      return renderNotification(request, reply, existing.id, { values, errors: notificationErrors(error), status: 422 })
    }
    return reply.redirect(`${prefix}/notifications/${existing.id}?notice=saved`, 303)
  })

  scope.post<{ Params: { id: string } }>('/notifications/:id/delete', { schema: formSchema, config: manage }, async (request, reply) => {
    const existing = await requireNotification(request.params.id)
    await notifications.remove(existing.id)
    return reply.redirect(`${prefix}/notifications?notice=notificationDeleted`, 303)
  })

  // The answer is the page with what was rendered: a test send is not a change to redirect away from.
  scope.post<{ Params: { id: string }; Body: Form }>('/notifications/:id/test', { schema: formSchema, config: manage }, async (request, reply) => {
    const existing = await requireNotification(request.params.id)
    const values: NotificationTestValues = { shipment: text(request.body.shipment).trim(), to: text(request.body.to).trim() }
    const refuse = (errors: FieldErrors) => renderNotification(request, reply, existing.id, { test: { values, errors, result: null }, status: 422 })
    if (values.shipment === '') return refuse({ shipment: ['Enter a shipment id or reference.'] })
    // A reference first (references may be all digits), then an id, then a return's reference (1001-r001).
    const byReference = (await shipments.list({ search: values.shipment, perPage: 100 })).shipments.find((candidate) => candidate.reference === values.shipment)
    const shipment = byReference ?? (/^[1-9]\d{0,15}$/.test(values.shipment) ? await shipments.get(Number(values.shipment)) : null)
    const entry = shipment ? null : await returnByReference(values.shipment)
    if (!shipment && !entry) return refuse({ shipment: [`No shipment "${values.shipment}".`] })
    const to = values.to === '' ? undefined : values.to.split(/[\s,;]+/).filter((address) => address !== '')
    try {
      const rendered = await notifications.sendTest(existing.id, shipment ? shipment.id : { returnId: entry!.id }, to)
      return renderNotification(request, reply, existing.id, { test: { values, errors: {}, result: { ...rendered, shipmentReference: shipment ? shipment.reference : `Return ${entry!.reference}` } } })
    } catch (error) {
      if (error instanceof NotificationConfigError) {
        // The service names its parameters; the form's fields are `shipment` and `to`.
        const [name] = Object.entries(notificationErrors(error))
        return refuse({ [name[0] === 'shipmentId' || name[0] === 'returnId' ? 'shipment' : name[0]]: name[1] })
      }
      // A template that fails while rendering, or the transport refusing: what the deliveries log would say.
      request.log.warn({ err: error, notificationId: existing.id, shipmentId: shipment?.id, returnId: entry?.id }, 'A test notification failed')
      return refuse({ form: [`The test failed: ${shortError(error)}`] })
    }
  })

  // --- ShipStation --------------------------------------------------------------------------------

  scope.get('/shipstation', { schema: hide, config: manage }, async (request, reply) => {
    const exchange = orderExchange
      ? {
          url: `${request.protocol}://${request.host}${options.orderExchangePrefix}/process`,
          settings: orderExchange.settings,
          trackingFieldProblems: options.trackingFieldProblems,
          // The newest 100 answered and the newest 100 refused, merged: a flood of refusals hides no export that worked.
          activity: (await Promise.all([false, true].map((refused) => orderExchange.activity.recent(100, { refused })))).flat().sort((a, b) => b.id - a.id),
        }
      : null
    return sendPage(request, reply, 'ShipStation', shipStationPage(exchange, timeZone))
  })
}
