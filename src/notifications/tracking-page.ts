// The public tracking page: what a customer sees behind a shipment's signed link, without a login. It shows
// the status, the timeline (statuses and dates only: no notes, user names or internal ids), the carrier
// with its tracking link, and the items, in the host's layout.
import type { FastifyPluginAsync } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { escapeHtml, html, safeHref, type SafeHtml } from '../admin/html.js'
import type { ShipmentService } from '../shipments/service.js'
import type { ShipmentStatus } from '../shipments/shipment.js'
import type { TrackingLinks } from './tracking-links.js'

/** What the layout hook gets: the page's title, its body (safe markup) and the language. */
export interface TrackingPage {
  /** Plain text (it holds the shipment's reference): escape it. */
  title: string
  /** Markup, escaped already. */
  body: string
  /** A language tag such as `en`. */
  language: string
}

export type TrackingPageLayout = (page: TrackingPage) => string | Promise<string>

export interface TrackingPageRoutesOptions {
  links: TrackingLinks
  shipments: ShipmentService
  timeZone: string
  layout: TrackingPageLayout
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

/** A standalone page, for hosts without a layout of their own. */
export function standaloneTrackingLayout(page: TrackingPage): string {
  return `<!doctype html><html lang="${escapeHtml(page.language)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(page.title)}</title><style>${STYLE}</style></head><body><main class="tracking">${page.body}</main></body></html>`
}

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1f2933}.tracking{max-width:40rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:8px;box-shadow:0 1px 3px #0002}' +
  'h1{font-size:1.5rem;margin:0 0 .25rem}.status{font-size:1.25rem;font-weight:600}.timeline{list-style:none;padding:0;border-left:3px solid #d0d5dd;margin:1rem 0}' +
  '.timeline li{padding:.25rem 0 .75rem 1rem}.timeline time{color:#52606d;font-size:.9rem;display:block}table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #e4e7eb}'

export const trackingPageRoutes: FastifyPluginAsync<TrackingPageRoutesOptions> = async (scope, options) => {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>()
  const { links, shipments, timeZone } = options

  const notFound = async (language = 'en') =>
    options.layout({ title: 'Tracking link not found', body: html`<h1>Tracking link not found</h1><p>This link is not valid any more. Please ask the shop for a new one.</p>`.value, language })

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
      // The link is the credential: it must not travel on in a Referer, be indexed or be cached by others.
      reply.header('referrer-policy', 'no-referrer').header('x-robots-tag', 'noindex').header('cache-control', 'private, no-store').type('text/html; charset=utf-8')
      const shipmentId = await links.verify(request.params.token)
      const shipment = shipmentId === null ? null : await shipments.get(shipmentId)
      if (!shipment || shipment.dateDeleted !== null) return reply.code(404).send(await notFound())
      const history = await shipments.history(shipment.id)
      // Oldest first, as a parcel's journey reads (the history is newest first).
      const timeline = [...history].reverse().map(
        (entry) => html`<li><strong>${LABELS[entry.toStatus]}</strong><time datetime="${entry.dateCreated}">${humanDate(entry.dateCreated, timeZone)}</time></li>`,
      )
      const trackingHref = safeHref(shipment.trackingUrl)
      const carrier: SafeHtml = shipment.trackingNumber
        ? html`<p>${shipment.carrier ?? 'Carrier'}: ${trackingHref ? html`<a href="${trackingHref}" rel="noopener noreferrer">${shipment.trackingNumber}</a>` : shipment.trackingNumber}${shipment.service ? html` (${shipment.service})` : ''}</p>`
        : html`<p>The tracking number will appear here once the parcel is on its way.</p>`
      const items =
        shipment.items.length > 0
          ? html`<h2>In this parcel</h2><table><thead><tr><th>Item</th><th>Quantity</th></tr></thead><tbody>${shipment.items.map((item) => html`<tr><td>${item.name}</td><td>${item.quantity}</td></tr>`)}</tbody></table>`
          : html``
      const body = html`<h1>Shipment ${shipment.reference}</h1>
<p class="status" data-status="${shipment.status}">${LABELS[shipment.status]}</p>
${carrier}
<h2>Timeline</h2><ol class="timeline">${timeline}</ol>
${items}`
      return reply.send(await options.layout({ title: `Shipment ${shipment.reference}`, body: body.value, language: 'en' }))
    },
  )
}
