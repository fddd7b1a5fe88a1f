// The customer's return pages beside the public tracking page: the form a delivered parcel's link opens
// (`<prefix>/<token>/return`), and a return's own page (`<prefix>/returns/<token>`). Plain HTML forms, no
// script; the signed token in the path is the capability, so no cookie or account is involved.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { ShipmentValidationError } from '../errors.js'
import { html, safeHref, type SafeHtml } from '../html.js'
import { clientAddressKey, createRateLimiter, type RateLimiter } from '../http/rate-limit.js'
import type { OrderStore } from '../order-store.js'
import type { ShipmentService } from '../shipments/service.js'
import type { Shipment } from '../model/shipment.js'
import { CustomerReturnRefused, type CustomerReturnLine, type CustomerReturnOffer, type CustomerReturns } from './customer-returns.js'
import { RETURN_STATE_LABELS, type Return } from '../model/return.js'
import type { ReturnService } from './service.js'

/** The tracking page's layout hook, as these pages call it. */
type Layout = (page: { title: string; body: string; language: string }) => string | Promise<string>

export interface CustomerReturnPagesOptions {
  customerReturns: CustomerReturns
  returns: ReturnService
  shipments: Pick<ShipmentService, 'get'>
  orders?: OrderStore | undefined
  links: { verify(token: string): Promise<number | null>; verifyReturn(token: string): Promise<number | null>; returnUrl(returnId: number): string }
  /** Where the tracking page is mounted (the redirect to a return's page). */
  prefix: string
  /** The site's origin: a form sent from any other origin is refused. */
  baseUrl: string
  timeZone: string
  rateLimit: { max: number; windowMs: number }
  clock: () => number
  layout: Layout
  notFound: () => Promise<string>
  /** The Content-Security-Policy of pages that hold a form (`form-action 'self'`). */
  formPolicy: string
}

/** A customer's reason code as words: `no_longer_needed` → "No longer needed". */
export const reasonText = (reason: string) => {
  const words = reason.replace(/[_.-]+/g, ' ').trim()
  return words.charAt(0).toUpperCase() + words.slice(1)
}

/** What comes next for the customer, by state. */
const NEXT_STEP: Readonly<Record<Return['state'], string>> = {
  requested: 'The shop will look at your return and let you know what happens next.',
  authorised: 'Your return is accepted. Please send the items back to the shop; the shop will tell you how.',
  rejected: 'The shop could not accept this return.',
  label_sent: 'Your return is accepted. Print the return label, stick it on the parcel and hand it to the carrier.',
  in_transit: 'Your return is on its way back to the shop.',
  received: 'The shop received your return.',
  closed: 'Your return is complete.',
}

const dateText = (date: Date | string, timeZone: string) => new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeZone }).format(new Date(date))
const dateTimeText = (date: string, timeZone: string) => new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone }).format(new Date(date))

/** The return section of a parcel's tracking page: the button to the form, or why there is none, and the order's returns. */
export async function customerReturnSection(options: Pick<CustomerReturnPagesOptions, 'customerReturns' | 'returns' | 'links' | 'timeZone'>, shipment: Shipment, token: string): Promise<SafeHtml> {
  const [offer, existing] = await Promise.all([options.customerReturns.offer(shipment), options.returns.ofOrder(shipment.orderId)])
  if (offer === null) return html``
  const start = offer.open
    ? html`<p><a class="button" href="${token}/return">Return items</a></p><p>You can start a return until <time datetime="${offer.closes.toISOString()}">${dateText(offer.closes, options.timeZone)}</time>.</p>`
    : html`<p class="notice">${offer.reason}</p>`
  const list =
    existing.length > 0
      ? html`<ul class="returns">${existing.map((each) => html`<li><a href="returns/${tokenOf(options.links.returnUrl(each.id))}">Return ${each.reference}</a>: ${RETURN_STATE_LABELS[each.state]}</li>`)}</ul>`
      : html``
  return html`<section class="shipment" id="returns"><h2>Returns</h2>${start}${list}</section>`
}

/** The last segment of a return's link. */
const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1)

export async function registerCustomerReturnPages(scope: FastifyInstance, options: CustomerReturnPagesOptions): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>()
  const { customerReturns, returns, shipments, links, timeZone } = options
  // Two counts, each with its own bound: forms from one client (IPv6 by its /64), and forms for one parcel.
  // Kept apart, a flood of new addresses can never take the place of a parcel's count (nor the reverse).
  const perAddress = createRateLimiter({ ...options.rateLimit, clock: options.clock })
  const perParcel = createRateLimiter({ ...options.rateLimit, clock: options.clock })
  const siteOrigin = new URL(options.baseUrl).origin

  const page = async (reply: FastifyReply, status: number, title: string, body: SafeHtml, policy: string | null = null) => {
    // A form's page: its POST names this site as its Origin (under no-referrer a browser sends `null`);
    // a Referer still never leaves the site.
    if (policy) reply.header('content-security-policy', policy).header('referrer-policy', 'same-origin')
    return reply.code(status).type('text/html; charset=utf-8').send(await options.layout({ title, body: body.value, language: 'en' }))
  }
  const tooManyAttempts = (reply: FastifyReply, limiter: RateLimiter, keys: string[]) => {
    reply.header('retry-after', String(limiter.retryAfterSeconds(keys)))
    return page(reply, 429, 'Too many attempts', html`<h1>Too many attempts</h1><p>Please wait a while before you try again.</p>`)
  }
  const notFound = async (reply: FastifyReply) => reply.code(404).type('text/html; charset=utf-8').send(await options.notFound())

  /** The parcel a link names, or null (forged, revoked, deleted): the not-found page. */
  async function shipmentOf(token: string): Promise<Shipment | null> {
    const id = await links.verify(token)
    const shipment = id === null ? null : await shipments.get(id)
    return shipment && shipment.dateDeleted === null ? shipment : null
  }

  /**
   * A form is only taken from the shop's own pages: a browser names where a POST comes from (Sec-Fetch-Site,
   * Origin), so a page elsewhere cannot send a customer's form for them. An opaque origin (`null`: a
   * sandboxed frame, a page under no-referrer) is refused unless the browser says it is this site's own.
   * Without either header (a script, a test) the token alone decides, as it does for reading.
   */
  function fromElsewhere(request: FastifyRequest): boolean {
    const site = request.headers['sec-fetch-site']
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return true
    const origin = request.headers.origin
    if (origin === 'null') return site !== 'same-origin'
    return typeof origin === 'string' && origin !== siteOrigin && origin !== `${request.protocol}://${request.host}`
  }

  const formPage = (token: string, offer: CustomerReturnOffer & { open: true }, values: Record<string, string>, errors: Record<string, string[]>): SafeHtml => {
    const messages = Object.values(errors).flat()
    const row = (line: CustomerReturnLine) => {
      const id = line.lineItemId
      const reason = values[`reason.${id}`] ?? ''
      return html`<tr><td><label for="quantity-${id}">${line.name}</label></td>
<td><input id="quantity-${id}" name="quantity.${id}" type="number" inputmode="numeric" min="0" max="${line.quantity}" value="${values[`quantity.${id}`] ?? '0'}"${errors[`quantity.${id}`] ? html` aria-invalid="true"` : ''}> of ${line.quantity}</td>
<td><select name="reason.${id}" aria-label="Reason for ${line.name}"${errors[`reason.${id}`] ? html` aria-invalid="true"` : ''}><option value="">Choose a reason</option>${customerReturns.reasons.map((code) => html`<option value="${code}"${code === reason ? html` selected` : ''}>${reasonText(code)}</option>`)}</select></td></tr>`
    }
    return html`<h1>Return items from order ${offer.order.reference}</h1>
<p>Choose what you send back and why. You can start a return until <time datetime="${offer.closes.toISOString()}">${dateText(offer.closes, timeZone)}</time>.</p>
${messages.length > 0 ? html`<div class="errors" role="alert"><p>Please check your return:</p><ul>${messages.map((message) => html`<li>${message}</li>`)}</ul></div>` : ''}
<form method="post">
<table><thead><tr><th>Item</th><th>Quantity to return</th><th>Reason</th></tr></thead><tbody>${offer.lines.map(row)}</tbody></table>
<p><label for="note">Anything the shop should know (optional)</label><br><textarea id="note" name="note" rows="3" cols="40" maxlength="2000">${values.note ?? ''}</textarea></p>
<p><button type="submit" class="button">Start the return</button></p>
</form>
<p><a href="../${token}">Back to the tracking page</a></p>`
  }

  // A form page: the policy lets it post to this site, and nowhere else.
  app.get(
    '/:token/return',
    { schema: { summary: 'The return form of a delivered parcel (HTML, no login: the signed token is the credential)', params: Type.Object({ token: Type.String() }) } },
    async (request, reply) => {
      const shipment = await shipmentOf(request.params.token)
      if (!shipment) return notFound(reply)
      const offer = await customerReturns.offer(shipment)
      if (!offer) return notFound(reply)
      if (!offer.open) return page(reply, 200, 'Return items', html`<h1>Return items</h1><p class="notice">${offer.reason}</p><p><a href="../${request.params.token}">Back to the tracking page</a></p>`)
      return page(reply, 200, `Return items from order ${offer.order.reference}`, formPage(request.params.token, offer, {}, {}), options.formPolicy)
    },
  )

  app.post(
    '/:token/return',
    {
      schema: {
        summary: 'Start a return of a delivered parcel (an HTML form: quantity.<lineId>, reason.<lineId>, note); 303 to the return’s own page',
        params: Type.Object({ token: Type.String() }),
        // Checked by hand below: a body of another shape gets the HTML page, never a JSON 400.
        body: Type.Unknown(),
      },
    },
    async (request, reply) => {
      if (fromElsewhere(request)) return page(reply, 403, 'Return not started', html`<h1>Return not started</h1><p>This form must be sent from the shop’s own page.</p>`)
      const address = [clientAddressKey(request.ip)]
      if (!perAddress.take(address)) return tooManyAttempts(reply, perAddress, address)
      const shipment = await shipmentOf(request.params.token)
      if (!shipment) return notFound(reply)
      // Counted by the parcel a valid link names: made-up links cannot fill this count's room.
      const parcel = [String(shipment.id)]
      if (!perParcel.take(parcel)) return tooManyAttempts(reply, perParcel, parcel)
      const body = request.body
      // Text fields only (a repeated field is an array: ignored), on an object no key can reach the prototype of.
      const values: Record<string, string> = Object.create(null)
      if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
        for (const [key, value] of Object.entries(body)) if (typeof value === 'string') values[key] = value
      }
      try {
        const started = await customerReturns.start(shipment, values)
        return reply.redirect(`${options.prefix}/returns/${tokenOf(links.returnUrl(started.return.id))}${started.labelFailed ? '?label=later' : ''}`, 303)
      } catch (error) {
        if (error instanceof CustomerReturnRefused) {
          return page(reply, 403, 'Return not started', html`<h1>Return not started</h1><p class="notice">${error.message}</p><p><a href="../${request.params.token}">Back to the tracking page</a></p>`)
        }
        if (!(error instanceof ShipmentValidationError)) throw error
        const offer = await customerReturns.offer(shipment)
        if (!offer?.open) return page(reply, 422, 'Return not started', html`<h1>Return not started</h1><p class="notice">${Object.values(error.errors).flat().join(' ')}</p>`)
        return page(reply, 422, `Return items from order ${offer.order.reference}`, formPage(request.params.token, offer, values, error.errors), options.formPolicy)
      }
    },
  )

  app.get(
    '/returns/:token',
    {
      schema: {
        summary: "A return's own page: its state, what comes next, the label's link, its history (HTML, no login)",
        params: Type.Object({ token: Type.String() }),
        querystring: Type.Object({ label: Type.Optional(Type.String()) }),
      },
    },
    async (request, reply) => {
      const returnId = await links.verifyReturn(request.params.token)
      const found = returnId === null ? null : await returns.get(returnId)
      if (!found) return notFound(reply)
      const [history, lines] = await Promise.all([returns.history(found.id), options.orders?.orderLines?.(found.orderId) ?? null])
      const nameOf = (lineItemId: number) => lines?.find((line) => line.id === lineItemId)?.name ?? `Item ${lineItemId}`
      const labelHref = safeHref(found.label?.url)
      const trackingHref = safeHref(found.trackingUrl)
      const body = html`<h1>Return ${found.reference}</h1>
<p class="status" data-state="${found.state}">${RETURN_STATE_LABELS[found.state]}</p>
<p>${NEXT_STEP[found.state]}${found.state === 'rejected' && found.stateMessage ? html` ${found.stateMessage}` : ''}</p>
${labelHref ? html`<p><a class="button" href="${labelHref}" rel="noopener noreferrer">Print the return label</a></p>` : ''}
${found.state === 'authorised' && request.query.label === 'later' ? html`<p class="notice">The return label will follow by email.</p>` : ''}
${found.trackingNumber ? html`<p>${found.carrier ?? 'Carrier'}: ${trackingHref ? html`<a href="${trackingHref}" rel="noopener noreferrer">${found.trackingNumber}</a>` : found.trackingNumber}</p>` : ''}
<h2>What you send back</h2><table><thead><tr><th>Item</th><th>Quantity</th><th>Reason</th></tr></thead><tbody>${found.lines.map((line) => html`<tr><td>${nameOf(line.lineItemId)}</td><td>${line.quantity}</td><td>${reasonText(line.reason)}</td></tr>`)}</tbody></table>
<h2>Timeline</h2><ol class="timeline">${[...history].reverse().map((entry) => html`<li><strong>${RETURN_STATE_LABELS[entry.toState as Return['state']] ?? entry.toState}</strong><time datetime="${entry.dateCreated}">${dateTimeText(entry.dateCreated, timeZone)}</time></li>`)}</ol>
<p>Keep this page’s address: it is your return’s tracking link.</p>`
      return page(reply, 200, `Return ${found.reference}`, body)
    },
  )
}
