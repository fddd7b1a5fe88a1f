// A provider written against the public API: a 3PL that posts JSON status updates with a bearer token.
import { timingSafeEqual, createHash } from 'node:crypto'
import { defineProvider, IntegrationError, Type } from '../src/index.js'

const digest = (value: string) => createHash('sha256').update(value).digest()

/**
 * Body: `{"shipmentReference": "1001-s001", "state": "DISPATCHED", "trackingNumber": "..."}` with
 * `Authorization: Bearer <token>`. States go through the integration's status map.
 */
export const acmeThreePlProvider = defineProvider({
  id: 'acme-3pl',
  name: 'ACME 3PL status push',
  settingsSchema: Type.Object(
    { token: Type.String({ minLength: 16, title: 'Bearer token', description: 'The token ACME sends in its Authorization header.' }) },
    { additionalProperties: false },
  ),
  secretSettings: ['token'],

  async handleGatewayRequest(request, context) {
    const presented = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1] ?? ''
    // Digests have equal lengths, so the comparison is constant-time whatever was presented.
    if (!timingSafeEqual(digest(presented), digest(context.settings.token))) throw new IntegrationError('Invalid bearer token.')

    let body: { shipmentReference?: unknown; state?: unknown; trackingNumber?: unknown }
    try {
      body = JSON.parse(request.rawBody.toString('utf8'))
    } catch {
      throw new IntegrationError('The body must be JSON.')
    }
    if (typeof body.shipmentReference !== 'string' || typeof body.state !== 'string') {
      throw new IntegrationError('shipmentReference and state are required strings.')
    }
    const orderReference = body.shipmentReference.replace(/-s\d+$/, '')
    const order = await context.orders.findOrderByReference(orderReference)
    const { shipments } = order ? await context.shipments.list({ orderId: order.id, perPage: 100 }) : { shipments: [] }
    const shipment = shipments.find((candidate) => candidate.reference === body.shipmentReference)
    if (!shipment) throw new IntegrationError(`Unknown shipment ${body.shipmentReference}.`)

    const status = context.integration.statusMap[body.state]
    if (!status) return { status: 202, body: { accepted: true, applied: false, reason: `unmapped state ${body.state}` } }
    const result = await context.shipments.update(shipment.id, {
      status,
      trackingNumber: typeof body.trackingNumber === 'string' ? body.trackingNumber : undefined,
      integrationHandle: context.integration.handle,
      externalCode: body.state,
    })
    return { body: { accepted: true, applied: true, status: result.shipment.status } }
  },

  async checkConnection(context) {
    return { ok: context.settings.token.length >= 16 }
  },
})
