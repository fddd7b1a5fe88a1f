// The public tracking page: what a customer sees behind a shipment's signed link, without a login. It is
// the order's page: each of its shipments with a progress bar, the carrier's estimate, the carrier's
// checkpoints newest first (or, before any, the status timeline: statuses and dates only, no notes, user
// names or internal ids), a button to the carrier's own page, and the items, in the host's layout.
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { html, safeHref, type SafeHtml } from '../html.js'
import type { OrderStore } from '../order-store.js'
import type { ShipmentService } from '../shipments/service.js'
import type { Shipment, ShipmentStatus } from '../model/shipment.js'
import { milestoneOf, type Checkpoint } from '../model/checkpoints.js'
import type { TrackingLinks } from './tracking-links.js'
import { badLinkAnswers, layoutFailed, trackingPagePolicy, type TrackingPageLayout } from './tracking-page-layout.js'
import { customerReturnSection, registerCustomerReturnPages, type CustomerReturnPagesOptions } from '../returns/customer-pages.js'

export interface TrackingPageRoutesOptions {
  links: TrackingLinks
  shipments: ShipmentService
  /** The order store: the page is headed by the shop's order reference. */
  orders?: OrderStore | undefined
  timeZone: string
  layout: TrackingPageLayout
  /** CSP frame-ancestors sources allowed to frame the page; default none. */
  frameAncestors?: readonly string[] | undefined
  /** A host's own Content-Security-Policy, replacing the package's. */
  contentSecurityPolicy?: string | null | undefined
  /** The shop's name (`trackingPage.shopName`): above the heading and in the title. */
  shopName?: string | null | undefined
  /** Customers' returns (`returns.windowDays` above 0): the return section, the form and the return's own page. */
  customerReturns?: Pick<CustomerReturnPagesOptions, 'customerReturns' | 'returns' | 'prefix' | 'baseUrl' | 'rateLimit' | 'clock'> | undefined
  /**
   * The instance the package was registered on, with the prefix: `trackingPageFrameworkErrors` answers
   * its malformed links (which Fastify's router refuses before any hook of the page runs).
   */
  mountedOn?: { server: object; prefix: string } | undefined
}

/** "24 Nov 2026, 14:05" in the site timezone. */
const humanDate = (iso: string, timeZone: string) =>
  new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone }).format(new Date(iso))

const LABELS: Readonly<Record<ShipmentStatus, string>> = {
  new: 'Order received',
  in_progress: 'Being prepared',
  on_hold: 'On hold',
  fulfilled: 'Packed',
  shipped: 'Shipped',
  cancelled: 'Cancelled',
}

/** The progress bar's steps, as a customer reads them. */
const STEPS = ['Ordered', 'Shipped', 'Out for delivery', 'Delivered'] as const

/** How far along the shipment is (an index of STEPS): the newest carrier milestone, else the status. */
function progressOf(shipment: Shipment, checkpoints: readonly Checkpoint[]): number {
  const milestones = checkpoints.map(milestoneOf).filter((milestone) => milestone !== null)
  if (milestones.includes('delivered')) return 3
  // A failed attempt is still out for delivery, as far as the customer is concerned.
  if (milestones.at(-1) === 'outForDelivery' || milestones.at(-1) === 'attempted') return 2
  return shipment.status === 'shipped' || checkpoints.length > 0 ? 1 : 0
}

/**
 * The parcel's heading: where the progress bar stands once the parcel is on its way (the newest carrier
 * milestone: "Out for delivery", "Delivered"), so the two never disagree; before that, the status.
 */
function statusText(shipment: Shipment, step: number): string {
  return step === 0 || shipment.status === 'cancelled' ? LABELS[shipment.status] : STEPS[step]!
}

/** "Tuesday 24 November": the date a carrier gave, as it gave it (no time zone moves it a day). */
function estimateText(estimate: string): { iso: string; text: string } | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})/.exec(estimate)
  if (!match) return null
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])))
  return { iso: `${match[1]}-${match[2]}-${match[3]}`, text: new Intl.DateTimeFormat('en-GB', { weekday: 'long', day: 'numeric', month: 'long', timeZone: 'UTC' }).format(date) }
}

/** "21 Nov 2026, 22:05": the scan's local time, the wall time the carrier sent with its offset. */
function localScanTime(checkpoint: Checkpoint): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}))?/.exec(checkpoint.occurredAt)
  if (!match) return checkpoint.occurredAt
  const wall = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]), Number(match[4] ?? 0), Number(match[5] ?? 0)))
  return new Intl.DateTimeFormat('en-GB', match[4] ? { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' } : { dateStyle: 'medium', timeZone: 'UTC' }).format(wall)
}

/** At most this many shipments of an order on one page (a page for a person, not a report). */
const MAX_SHIPMENTS_SHOWN = 20

export const trackingPageRoutes: FastifyPluginAsync<TrackingPageRoutesOptions> = async (scope, options) => {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>()
  const { links, shipments, timeZone } = options
  const frameAncestors = options.frameAncestors ?? []
  const policy = options.contentSecurityPolicy ?? trackingPagePolicy(frameAncestors)
  const formPolicy = options.contentSecurityPolicy ?? trackingPagePolicy(frameAncestors, "'self'")

  const notFound = async (language = 'en') =>
    options.layout({ title: 'Tracking link not found', body: html`<h1>Tracking link not found</h1><p>This link is not valid any more. Please ask the shop for a new one.</p>`.value, language })

  // Every answer under the prefix, the not-found page included: the link is the credential, so it must
  // not travel on in a Referer, be indexed or be cached by others; and the page is never framed by others.
  const secure = (reply: FastifyReply) => {
    reply
      .header('referrer-policy', 'no-referrer')
      .header('x-robots-tag', 'noindex')
      .header('cache-control', 'private, no-store')
      .header('content-security-policy', policy)
      .header('x-content-type-options', 'nosniff')
    // X-Frame-Options knows no list of origins: sent only when nobody may frame the page.
    if (frameAncestors.length === 0) reply.header('x-frame-options', 'DENY')
  }
  app.addHook('onRequest', async (_request, reply) => secure(reply))

  if (options.mountedOn) {
    const { server, prefix } = options.mountedOn
    const answer = async (reply: FastifyReply) => {
      secure(reply)
      return reply.code(404).type('text/html; charset=utf-8').send(await notFound())
    }
    badLinkAnswers.set(server, [...(badLinkAnswers.get(server) ?? []), { prefix, answer }])
  }

  // A malformed link (a trailing slash, a further segment, nothing after the prefix) is a link that is
  // not valid: the same page as a forged one, never the host's JSON 404.
  app.setNotFoundHandler(async (_request, reply) => reply.code(404).type('text/html; charset=utf-8').send(await notFound()))
  // Beside the token routes: what they cannot take (a token longer than the router's parameter limit, a
  // further segment) lands here instead of the server's JSON 414 (which echoes the path) or the host's 404.
  // For every method a route of the page takes: the router falls back to a catch-all of the request's own
  // method only. Answered before any body is read, so a link that is not one is the same page whatever it carries.
  const notALink = async (_request: FastifyRequest, reply: FastifyReply) => reply.code(404).type('text/html; charset=utf-8').send(await notFound())
  app.route({ method: ['GET', 'POST'], url: '/*', schema: { hide: true }, onRequest: notALink, handler: notALink })

  // The return form is the only body these pages take: an HTML form, small, nothing else parsed (the
  // parser loads only for a shop that takes returns from customers).
  if (options.customerReturns) {
    scope.removeAllContentTypeParsers()
    await scope.register((await import('@fastify/formbody')).default, { bodyLimit: 16_384 })
  }
  // Whatever fails here (a body of another type, too large, a fault) is a page for a person, never JSON.
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500
    if (status === 500) request.log.error({ err: error }, 'Tracking page request failed')
    const message = status === 500 ? 'Something went wrong on our side. Please try again later.' : 'The shop could not read this request.'
    let page: string
    try {
      page = await options.layout({ title: 'Request not completed', body: html`<h1>Request not completed</h1><p>${message}</p>`.value, language: 'en' })
    } catch (layoutError) {
      return layoutFailed(request, reply, layoutError)
    }
    return reply.code(status).type('text/html; charset=utf-8').send(page)
  })
  const customer = options.customerReturns ? { ...options.customerReturns, shipments, orders: options.orders, links, timeZone, layout: options.layout, notFound, formPolicy } : null
  if (customer) await registerCustomerReturnPages(scope, customer)

  /** One shipment of the order: progress, estimate, the carrier's button, checkpoints (or the status timeline), items. */
  async function shipmentSection(shipment: Shipment, caption: string | null): Promise<SafeHtml> {
    const checkpoints = await shipments.checkpoints(shipment.id)
    const step = progressOf(shipment, checkpoints)
    const progress =
      shipment.status === 'cancelled'
        ? html``
        : html`<ol class="progress" aria-label="Progress">${STEPS.map((label, index) => html`<li${index <= step ? html` class="done"` : ''}${index === step ? html` aria-current="step"` : ''}>${label}</li>`)}</ol>`
    const estimate = shipment.estimatedDelivery && step < 3 ? estimateText(shipment.estimatedDelivery) : null
    const trackingHref = safeHref(shipment.trackingUrl)
    const carrier: SafeHtml = shipment.trackingNumber
      ? html`<p>${shipment.carrier ?? 'Carrier'}: ${trackingHref ? html`<a href="${trackingHref}" rel="noopener noreferrer">${shipment.trackingNumber}</a>` : shipment.trackingNumber}${shipment.service ? html` (${shipment.service})` : ''}</p>
${trackingHref ? html`<p><a class="button" href="${trackingHref}" rel="noopener noreferrer">Track on ${shipment.carrier ?? 'the carrier’s site'}</a></p>` : ''}`
      : html`<p>The tracking number will appear here once the parcel is on its way.</p>`
    let journey: SafeHtml
    if (checkpoints.length > 0) {
      journey = html`<h3>Where it is</h3><ol class="checkpoints">${[...checkpoints].reverse().map(
        (checkpoint) => html`<li><strong>${checkpoint.message ?? checkpoint.status ?? 'Scanned'}</strong>${checkpoint.location ? html`<span class="place">${checkpoint.location}</span>` : ''}<time datetime="${checkpoint.occurredAtUtc}">${localScanTime(checkpoint)} (local time)</time></li>`,
      )}</ol>`
    } else {
      // Oldest first, as a parcel's journey reads (the history is newest first).
      const history = await shipments.history(shipment.id)
      journey = html`<h3>Timeline</h3><ol class="timeline">${[...history].reverse().map(
        (entry) => html`<li><strong>${LABELS[entry.toStatus]}</strong><time datetime="${entry.dateCreated}">${humanDate(entry.dateCreated, timeZone)}</time></li>`,
      )}</ol>`
    }
    const items =
      shipment.items.length > 0
        ? html`<h3>In this parcel</h3><table><thead><tr><th>Item</th><th>Quantity</th></tr></thead><tbody>${shipment.items.map((item) => html`<tr><td>${item.name}</td><td>${item.quantity}</td></tr>`)}</tbody></table>`
        : html``
    return html`<section class="shipment">${caption ? html`<h2>${caption}</h2>` : ''}
<p class="status" data-status="${shipment.status}">${statusText(shipment, step)}</p>
${progress}
${estimate ? html`<p class="estimate">Expected delivery: <time datetime="${estimate.iso}">${estimate.text}</time></p>` : ''}
${carrier}
${journey}
${items}</section>`
  }

  app.get(
    '/:token',
    {
      schema: {
        summary: "A shipment's public tracking page (the signed link of notifications)",
        description: 'HTML for the customer, no login: the signed token in the path is the credential. Internal ids, notes and user names are never shown.',
        // No length limit here: any token that is not a link gets the "not found" page, never a JSON 400.
        params: Type.Object({ token: Type.String() }),
      },
    },
    async (request, reply) => {
      reply.type('text/html; charset=utf-8')
      const shipmentId = await links.verify(request.params.token)
      const shipment = shipmentId === null ? null : await shipments.get(shipmentId)
      if (!shipment || shipment.dateDeleted !== null) return reply.code(404).send(await notFound())
      // The order's page: each of its live shipments (cancelled ones left out, unless the link is for one).
      const order = options.orders ? await options.orders.findOrder(shipment.orderId) : null
      const siblings = (await shipments.list({ orderId: shipment.orderId, perPage: MAX_SHIPMENTS_SHOWN })).shipments
      const shown = siblings.filter((other) => other.id === shipment.id || (other.enabled && other.status !== 'cancelled'))
      if (!shown.some((other) => other.id === shipment.id)) shown.unshift(shipment)
      const sections = await Promise.all(shown.map((each, index) => shipmentSection(each, shown.length > 1 ? `Parcel ${index + 1} of ${shown.length}` : null)))
      const heading = order ? `Order ${order.reference}` : `Shipment ${shipment.reference}`
      const returnSection = customer ? await customerReturnSection(customer, shipment, request.params.token) : ''
      const body = html`${options.shopName ? html`<p class="shop">${options.shopName}</p>` : ''}<h1>${heading}</h1>
${sections}
${returnSection}`
      return reply.send(await options.layout({ title: options.shopName ? `${heading} · ${options.shopName}` : heading, body: body.value, language: 'en' }))
    },
  )
}
