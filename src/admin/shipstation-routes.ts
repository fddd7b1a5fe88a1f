// The ShipStation screen's routes: the order exchange's URL, settings and recent activity, and the
// connection doctor run from this server against this site's own Custom Store URL.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { runConnectionDoctor, type DoctorReport } from '../order-exchange/doctor.js'
import { shipStationPage } from './shipstation-page.js'
import { formSchema, hide, routePermissions, text, type AdminScreen, type Form } from './screen.js'

export function registerShipStationRoutes(screen: AdminScreen) {
  const { scope, options, prefix, context, sendPage } = screen
  const { orderExchange, timeZone } = options
  const { manage } = routePermissions
  const ownUrl = (request: FastifyRequest) => `${request.protocol}://${request.host}${options.orderExchangePrefix}/process`

  async function render(request: FastifyRequest, reply: FastifyReply, doctor: { url?: string; report?: DoctorReport; refused?: string } = {}, status?: number) {
    const exchange = orderExchange
      ? {
          url: ownUrl(request),
          settings: orderExchange.settings,
          trackingFieldProblems: options.trackingFieldProblems,
          // The newest 100 answered and the newest 100 refused, merged: a flood of refusals hides no export that worked.
          activity: (await Promise.all([false, true].map((refused) => orderExchange.activity.recent(100, { refused })))).flat().sort((a, b) => b.id - a.id),
        }
      : null
    const section = exchange
      ? { action: `${prefix}/shipstation/doctor`, csrf: context(request, reply).csrf, url: doctor.url ?? exchange.url, report: doctor.report ?? null, refused: doctor.refused ?? null }
      : null
    return sendPage(request, reply, 'ShipStation', shipStationPage(exchange, timeZone, section), status)
  }

  scope.get('/shipstation', { schema: hide, config: manage }, async (request, reply) => render(request, reply))

  // The doctor sends ShipStation's credentials to the URL: only to this site's own origin (the one the
  // admin page is served from), never to an address a form names elsewhere.
  scope.post<{ Body: Form }>('/shipstation/doctor', { schema: formSchema, config: manage }, async (request, reply) => {
    if (!orderExchange) return render(request, reply, {}, 404)
    const url = text(request.body.url).trim()
    let origin: string | null = null
    try {
      origin = new URL(url).origin
    } catch {
      origin = null
    }
    if (origin !== new URL(ownUrl(request)).origin) {
      return render(request, reply, { url, refused: `The doctor calls only this site's own address (${new URL(ownUrl(request)).origin}): it sends ShipStation's credentials with each request.` }, 422)
    }
    const { username, password } = orderExchange.settings
    const report = await runConnectionDoctor({ url, username, password, expectedPath: `${options.orderExchangePrefix}/process`, timeoutMs: 10_000 })
    return render(request, reply, { url, report })
  })
}
