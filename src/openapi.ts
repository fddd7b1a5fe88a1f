// The OpenAPI 3.1 document of the package's HTTP routes, generated from their TypeBox schemas by
// @fastify/swagger on a Fastify instance of its own, so a host's routes and its own swagger set-up
// are never touched.
import Fastify from 'fastify'
import swagger from '@fastify/swagger'
import type { OpenAPIV3_1 } from 'openapi-types'
import { shipmentRoutes } from './shipments/routes.js'
import { deliveryRoutes } from './deliveries/routes.js'
import { gatewayRoutes } from './gateway/routes.js'
import { orderExchangeRoutes } from './order-exchange/routes.js'
import { trackingPageRoutes } from './notifications/tracking-page.js'
import type { OrderExchangeSettings } from './order-exchange/settings.js'
import { DEFAULT_PREFIXES, prefixesWithDefaults, type ShipmentsPrefixes } from './options.js'
import { FrameworkErrorSchema } from './shipments/schemas.js'

type Operation = OpenAPIV3_1.OperationObject
const errorResponse = (description: string): OpenAPIV3_1.ResponseObject => ({
  description,
  content: { 'application/json': { schema: structuredClone(FrameworkErrorSchema) as OpenAPIV3_1.SchemaObject } },
})

/**
 * Responses the route schemas cannot carry without changing what is sent: the gateway passes the
 * provider's response through unchanged (a schema would reshape it), and the order exchange answers
 * XML, or errors as an HTML page unless the client asks for JSON.
 */
function describeUnschematizedResponses(document: OpenAPIV3_1.Document, prefixes: typeof DEFAULT_PREFIXES, trackingPage: string | null) {
  const page = (description: string): OpenAPIV3_1.ResponseObject => ({ description, content: { 'text/html': { schema: { type: 'string' } } } })
  for (const operation of Object.values(document.paths?.[`${trackingPage}/{token}`] ?? {}) as Operation[]) {
    operation.responses = {
      '200': page("The shipment's status, timeline, carrier with its tracking link and items, in the host's layout; no login (the token is the credential). Sent with Referrer-Policy no-referrer, X-Robots-Tag noindex and Cache-Control private, no-store."),
      '404': page('The token is forged, malformed or revoked, or the shipment is deleted: a page saying the link is not valid any more.'),
    }
  }
  for (const operation of Object.values(document.paths?.[`${prefixes.gateway}/handle`] ?? {}) as Operation[]) {
    operation.responses = {
      default: { description: "The provider's response, passed through unchanged (status, headers, body)." },
      '400': errorResponse('No integration parameter; the integration is disabled or has no provider; the provider refused the request (its message) or failed.'),
      '404': errorResponse('Unknown integration.'),
      '413': errorResponse('The body is larger than gatewayBodyLimit; the provider is not called.'),
    }
  }
  const exchangeError = (description: string): OpenAPIV3_1.ResponseObject => ({
    description: `${description} An HTML page, or JSON when the first type in Accept is JSON.`,
    content: {
      'text/html': { schema: { type: 'string' } },
      'application/json': { schema: structuredClone(FrameworkErrorSchema) as OpenAPIV3_1.SchemaObject },
    },
  })
  for (const operation of Object.values(document.paths?.[`${prefixes.orderExchange}/process`] ?? {}) as Operation[]) {
    const shipNotified = (operation.responses?.['200'] as OpenAPIV3_1.ResponseObject | undefined)?.content?.['application/json']
    operation.security = [{ shipStationBasic: [] }]
    operation.responses = {
      '200': {
        description: 'action=export: the orders document (ShipStation Custom Store XML); action=shipnotify: {"success": true}.',
        content: { 'text/xml': { schema: { type: 'string' } }, ...(shipNotified && { 'application/json': shipNotified }) },
      },
      '400': exchangeError('No or an unknown action; an unreadable date, ShipNotice body or parameter.'),
      '401': exchangeError('Credentials missing or wrong (with a WWW-Authenticate challenge).'),
      '404': exchangeError('No order matches order_number.'),
      '406': exchangeError('order_number is missing or empty.'),
      '413': exchangeError('The body is larger than bodyLimit.'),
      '500': exchangeError('A blank or unknown status setting, an order that could not be saved, or an invalid order with failOnValidation.'),
    }
  }
}

export interface OpenApiDocumentOptions {
  /** Where the surfaces are mounted (the plugin's `prefixes`). Default: the plugin's defaults. */
  prefixes?: ShipmentsPrefixes | undefined
  /** Include the order exchange's route. Default true. */
  orderExchange?: boolean | undefined
  /** Where the public tracking page is mounted (the `trackingPage.prefix` option), or null to leave it out. Default '/shipments/track'. */
  trackingPage?: string | null | undefined
  /** The document's `info`. Default: the package's title and version 0.1.0. */
  info?: OpenAPIV3_1.InfoObject | undefined
}

/** The package's routes as an OpenAPI 3.1 document, to serve or to merge into a host's own. */
export async function shipmentsOpenApiDocument(options: OpenApiDocumentOptions = {}): Promise<OpenAPIV3_1.Document> {
  const prefixes = prefixesWithDefaults(options.prefixes)
  const app = Fastify({ logger: false })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: options.info ?? { title: 'fastify-shipments', version: '0.1.0' },
      components: {
        securitySchemes: {
          shipStationBasic: { type: 'http', scheme: 'basic', description: 'The order exchange: orderExchange.username / password' },
        },
      },
    },
  })
  // Only the schemas are read: no handler of this instance ever runs, so the services are absent.
  const absent = undefined as never
  await app.register(shipmentRoutes, { prefix: prefixes.shipmentApi, service: absent, timeZone: 'UTC', resolveUser: absent, hasPermission: absent })
  await app.register(deliveryRoutes, { prefix: prefixes.shipmentApi, service: absent, boxes: absent, resolveUser: absent, hasPermission: absent })
  await app.register(gatewayRoutes, { prefix: prefixes.gateway, integrations: absent, registry: absent, bodyLimit: 1 })
  if (options.orderExchange ?? true) {
    const settings = { username: 'documented', password: 'documented', bodyLimit: 1, acceptQueryCredentials: false } as OrderExchangeSettings
    await app.register(orderExchangeRoutes, { prefix: prefixes.orderExchange, service: absent, settings })
  }
  const trackingPage = options.trackingPage === undefined ? '/shipments/track' : options.trackingPage
  if (trackingPage !== null) await app.register(trackingPageRoutes, { prefix: trackingPage, links: absent, shipments: absent, timeZone: 'UTC', layout: absent })
  await app.ready()
  const document = app.swagger() as OpenAPIV3_1.Document
  await app.close()
  describeUnschematizedResponses(document, prefixes, trackingPage)
  return document
}
