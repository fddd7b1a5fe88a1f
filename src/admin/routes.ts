// The store admins' pages: an encapsulated scope with its own cookies, form bodies, CSRF tokens,
// security headers and error pages. Every change goes through the package's services.
//
// This module keeps what every screen shares (the hooks, the form parser, CSRF, the layout and the
// navigation, the error pages, the assets); each screen's routes are a module of their own beside its
// pages, `<screen>-routes.ts` next to `<screen>-pages.ts`, given the shared parts as an AdminScreen
// (screen.ts). Flat files rather than a folder per screen: the page modules already sit flat here, and
// a route module imports its pages as a sibling, with no page module moved.
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { FastifyError, FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import fastifyCookie from '@fastify/cookie'
import fastifyFormbody from '@fastify/formbody'
import fastifyCsrfProtection from '@fastify/csrf-protection'
import { ShipmentsErrors } from '../errors.js'
import { ShipmentsPermissions } from '../shipments/routes.js'
import { html, type SafeHtml } from '../html.js'
import { notice, standaloneLayout } from './components.js'
import { ADMIN_CONTENT_SECURITY_POLICY, ADMIN_CSRF_COOKIE, type AdminPage } from './options.js'
import type { PageContext } from './shipment-pages.js'
import { AdminNotFound, hide, text, type AdminRoutesOptions, type AdminScreen } from './screen.js'
import { chartScript } from './chart-script.js'
import { registerOverviewRoutes } from './overview-routes.js'
import { registerShipmentRoutes } from './shipment-routes.js'
import { registerParcelRoutes } from './parcel-routes.js'
import { registerReturnRoutes } from './return-routes.js'
import { registerManifestRoutes } from './manifest-routes.js'
import { registerOrderRoutes } from './order-routes.js'
import { registerIntegrationRoutes } from './integration-routes.js'
import { registerWebhookRoutes } from './webhook-routes.js'
import { registerSystemRoutes } from './system-routes.js'
import { registerNotificationRoutes } from './notification-routes.js'
import { registerShipStationRoutes } from './shipstation-routes.js'
import { registerPackStationRoutes } from './pack-station-routes.js'
import { registerRulesRoutes } from './rules-routes.js'
import { registerBatchRoutes } from './batch-routes.js'
import { registerAddressRoutes } from './address-routes.js'
import { registerCustomsRoutes } from './customs-routes.js'
import { packageFile } from '../package-files.js'

export type { AdminRoutesOptions } from './screen.js'


const ASSETS = {
  'admin.css': { type: 'text/css; charset=utf-8', body: readFileSync(packageFile('assets/admin/admin.css')) },
  'admin.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(packageFile('assets/admin/admin.js')) },
  'overview.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(packageFile('assets/admin/overview.js')) },
  'pack-station.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(packageFile('assets/admin/pack-station.js')) },
}

/** Notices a redirect may ask for by name; the page never shows text taken from the query. */
const NOTICES: Record<string, string> = {
  saved: 'Saved.',
  manifestCreated: 'Manifest created: print its form below.',
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
  jobRetried: 'Job queued again with fresh retries.',
  jobDismissed: 'Job dismissed: it will not be tried again.',
  jobNotFailed: 'Not done: no failed job has that id (retried or dismissed already?).',
  linkRevoked: 'Tracking link revoked: every earlier link answers 404. The link below is the new one.',
}

export const adminRoutes: FastifyPluginAsync<AdminRoutesOptions> = async (scope, options) => {
  const { admin, orders, timeZone } = options
  const prefix = admin.prefix
  // The attention list needs the order store's lines; without them its page says so and the navigation leaves it out.
  const storeHasLines = Boolean(orders.orderLines && orders.listCompletedOrders)

  const csrfUserInfo = await registerRequestHooks(scope, options)

  const context = (request: FastifyRequest, reply: FastifyReply): PageContext => {
    const state = request.shipmentsAdmin!
    return { prefix, csrf: reply.generateCsrf({ userInfo: csrfUserInfo(request) }), can: state.can, timeZone }
  }

  const navigationFor = createNavigation(options, storeHasLines)

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


  // --- Assets -------------------------------------------------------------------------------------

  scope.get<{ Params: { file: string } }>('/assets/:file', { schema: hide }, async (request, reply) => {
    const { file } = request.params
    const chart = file === 'chart.umd.js' ? chartScript() : null
    const asset = chart ? { type: 'text/javascript; charset=utf-8', body: chart } : Object.hasOwn(ASSETS, file) ? ASSETS[file as keyof typeof ASSETS] : null
    if (!asset) throw AdminNotFound('Asset')
    return reply.type(asset.type).header('cache-control', 'public, max-age=3600').send(asset.body)
  })

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

  const screen: AdminScreen = { scope, options, prefix, storeHasLines, context, sendPage, noticeOf, orderReferencesOf }
  registerOverviewRoutes(screen)
  const { renderShipment } = registerShipmentRoutes(screen)
  registerParcelRoutes(screen, renderShipment)
  registerRulesRoutes(screen, renderShipment)
  registerCustomsRoutes(screen, renderShipment)
  registerReturnRoutes(screen)
  registerManifestRoutes(screen)
  registerOrderRoutes(screen)
  registerIntegrationRoutes(screen)
  registerWebhookRoutes(screen)
  registerSystemRoutes(screen)
  registerNotificationRoutes(screen)
  registerShipStationRoutes(screen)
  registerPackStationRoutes(screen)
  registerBatchRoutes(screen)
  registerAddressRoutes(screen, renderShipment)
}

/**
 * The scope's hooks, in place before any screen's routes: cookies, form bodies and CSRF tokens, the
 * security headers, then the user and the page's permission. Returns what a form's token is bound to.
 */
async function registerRequestHooks(scope: FastifyInstance, options: AdminRoutesOptions) {
  const { admin, resolveUser, hasPermission } = options
  const prefix = admin.prefix

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

  return csrfUserInfo
}

/** The navigation's links for the request's user, with the attention list's and the returns' counts. */
function createNavigation(options: AdminRoutesOptions, storeHasLines: boolean) {
  const { admin, shipments } = options
  const prefix = admin.prefix

  const navigationFor = async (request: FastifyRequest): Promise<AdminPage['navigation']> => {
    const can = request.shipmentsAdmin?.can
    const links: Array<{ label: string; href: string; count?: number }> = can?.view ? [{ label: 'Overview', href: `${prefix}/overview` }] : []
    links.push({ label: 'Shipments', href: `${prefix}/shipments` })
    if (can?.view && storeHasLines) links.push({ label: 'Attention', href: `${prefix}/attention`, count: await attentionCount(request) })
    if (can?.view) links.push({ label: 'Returns', href: `${prefix}/returns`, count: await returnsWaiting(request) })
    if (can?.view) links.push({ label: 'Boxes', href: `${prefix}/boxes` })
    if (can?.buyLabels) links.push({ label: 'Pack station', href: `${prefix}/pack-station` })
    if (can?.view) links.push({ label: 'Shipping rules', href: `${prefix}/shipping-rules` })
    if (can?.view) links.push({ label: 'Customs', href: `${prefix}/customs` })
    if (can?.buyLabels) links.push({ label: 'Manifests', href: `${prefix}/manifests` })
    if (can?.buyLabels) links.push({ label: 'Label batches', href: `${prefix}/label-batches` })
    if (can?.manage) {
      links.push(
        { label: 'Integrations', href: `${prefix}/integrations` },
        { label: 'Webhooks', href: `${prefix}/webhooks` },
        { label: 'Notifications', href: `${prefix}/notifications` },
        { label: 'ShipStation', href: `${prefix}/shipstation` },
        { label: 'System', href: `${prefix}/system` },
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

  return navigationFor
}
