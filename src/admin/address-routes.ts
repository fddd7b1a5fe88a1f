// Verified addresses' admin routes: the shipment page's address panel and its buttons (Verify, Accept the
// correction, Ship as is: each comes back to the shipment page, a refusal beside the panel), and the
// setting saved from its section of the Shipping rules page.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ShipmentValidationError } from '../errors.js'
import { html } from '../html.js'
import { addressSettingSectionOf } from './address-pages.js'
import type { FieldErrors } from './components.js'
import type { RenderShipment } from './shipment-routes.js'
import { adminUserId, formSchema, refusalOf, routePermissions, shipmentId, text, type AdminScreen, type Form } from './screen.js'

export function registerAddressRoutes(screen: AdminScreen, renderShipment: RenderShipment) {
  const { scope, options, prefix, context, sendPage } = screen
  const { edit } = routePermissions
  const actions = {
    '': (id: number) => options.addresses.verify(id),
    accept: (id: number) => options.addresses.accept(id),
    'as-is': (id: number) => options.addresses.asIs(id),
  }
  for (const [action, run] of Object.entries(actions)) {
    scope.post<{ Params: { id: string }; Body: Form }>(`/shipments/:id/address-check${action ? `/${action}` : ''}`, { schema: formSchema, config: edit }, async (request, reply) => {
      const id = shipmentId(request.params.id)
      try {
        await run(id)
      } catch (error) {
        const refusal = error instanceof ShipmentValidationError ? Object.values(error.errors).flat().join(' ') : refusalOf(error)
        if (refusal) return renderShipment(request, reply, id, { addressProblem: refusal, status: (error as { statusCode?: number }).statusCode ?? 422 })
        throw error
      }
      return reply.redirect(`${prefix}/shipments/${id}?notice=saved#ship-to`, 303)
    })
  }

  scope.post<{ Body: Form }>('/address-verification', { schema: formSchema, config: edit }, async (request, reply) => {
    const values = { addressMode: text(request.body.addressMode), addressIntegration: text(request.body.addressIntegration) }
    try {
      await options.addresses.saveSetting({ mode: values.addressMode, integration: values.addressIntegration || null }, { userId: adminUserId(request) })
    } catch (error) {
      const errors: FieldErrors | null =
        error instanceof ShipmentValidationError
          ? Object.fromEntries(Object.entries(error.errors).map(([name, messages]) => [name === 'mode' ? 'addressMode' : 'addressIntegration', messages]))
          : refusalOf(error) !== null
            ? { addressIntegration: [refusalOf(error)!] }
            : null
      if (!errors) throw error
      const content = await addressSettingSectionOf(options, context(request, reply), { values, errors })
      return sendPage(request, reply, 'Address verification', html`<h1>Address verification</h1>${content}`, 422)
    }
    return reply.redirect(`${prefix}/shipping-rules?notice=saved#address-verification`, 303)
  })
}
