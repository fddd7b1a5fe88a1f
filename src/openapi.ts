// The OpenAPI 3.1 document of the package's HTTP routes, generated from their TypeBox schemas by
// @fastify/swagger on a Fastify instance of its own, so a host's routes and its own swagger set-up
// are never touched.
import type { OpenAPIV3_1 } from 'openapi-types'
import { shipmentRoutes } from './shipments/routes.js'
import { deliveryRoutes } from './deliveries/routes.js'
import { returnRoutes } from './returns/routes.js'
import { documentRoutes } from './documents/routes.js'
import { packStationRoutes } from './pack-station/routes.js'
import { shippingRuleRoutes } from './rules/routes.js'
import { manifestRoutes } from './manifests/routes.js'
import { batchRoutes } from './batches/routes.js'
import { addressRoutes } from './addresses/routes.js'
import { customsRoutes } from './customs/routes.js'
import { gatewayRoutes } from './gateway/routes.js'
import type { OrderExchangeSettings } from './order-exchange/settings.js'
import { DEFAULT_PREFIXES, prefixesWithDefaults, type ShipmentsPrefixes } from './prefixes.js'
import { FrameworkErrorSchema } from './shipments/schemas.js'
import { ShipmentsErrors } from './errors.js'
import { missingPackages } from './lazy.js'

type Operation = OpenAPIV3_1.OperationObject
const errorResponse = (description: string): OpenAPIV3_1.ResponseObject => ({
  description,
  content: { 'application/json': { schema: structuredClone(FrameworkErrorSchema) as OpenAPIV3_1.SchemaObject } },
})

const text = (description?: string): OpenAPIV3_1.SchemaObject => ({ type: 'string', ...(description && { description }) })

/** ShipStation's ShipNotice, as far as the package reads it (other elements are ignored). */
const ShipNoticeSchema: OpenAPIV3_1.SchemaObject = {
  type: 'object',
  xml: { name: 'ShipNotice' },
  properties: {
    OrderNumber: text('The order reference (order_number in the query wins)'),
    OrderID: text('The original order of a split order whose number the store does not know'),
    Carrier: text(),
    Service: text(),
    TrackingNumber: text(),
    Items: {
      type: 'array',
      maxItems: 500,
      xml: { wrapped: true },
      description: 'What the package held; absent or empty: the whole order',
      items: {
        type: 'object',
        xml: { name: 'Item' },
        properties: { SKU: text(), Name: text(), Quantity: { type: 'integer', minimum: 1 }, LineItemID: text('The LineItemID the export sent') },
      },
    },
  },
}

/** The ship notification's parameters sent as a form or JSON body (a query parameter of the same name wins). */
const shipNotifyParameters = (values: OpenAPIV3_1.SchemaObject): OpenAPIV3_1.SchemaObject => ({
  type: 'object',
  properties: Object.fromEntries(['action', 'order_number', 'carrier', 'service', 'tracking_number'].map((name) => [name, values])),
})

/** Bodies the routes read as bytes (a schema on the route would have Fastify validate the bytes). */
function describeRawBodies(document: OpenAPIV3_1.Document, prefixes: typeof DEFAULT_PREFIXES) {
  const gateway = document.paths?.[`${prefixes.gateway}/handle`] as Record<string, Operation> | undefined
  // One route serves every method, so its operations are one object: each method with a body gets its own copy.
  for (const method of ['post', 'put', 'patch']) {
    const operation = gateway?.[method]
    if (!operation) continue
    gateway[method] = { ...operation, requestBody: {
      required: false,
      description: "The provider's payload, passed to it as the raw bytes that were sent (signatures are computed over them), under any content type, up to gatewayBodyLimit.",
      content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
    } }
  }
  const exchange = document.paths?.[`${prefixes.orderExchange}/process`] as Record<string, Operation> | undefined
  if (exchange?.post) {
    exchange.post = { ...exchange.post, requestBody: {
      required: false,
      description: 'action=shipnotify: a ShipNotice (XML, under any content type), or the parameters as a form or JSON. action=export: none.',
      content: {
        'application/xml': { schema: ShipNoticeSchema },
        'text/xml': { schema: ShipNoticeSchema },
        'application/x-www-form-urlencoded': { schema: shipNotifyParameters(text()) },
        'application/json': { schema: shipNotifyParameters({ type: ['string', 'number'] }) },
      },
    } }
  }
  // A POST of the shipment API without a body is one with an empty object.
  for (const path of [`${prefixes.shipmentApi}/shipments/{id}`, `${prefixes.shipmentApi}/orders/{orderId}/shipments`]) {
    const requestBody = (document.paths?.[path]?.post as Operation | undefined)?.requestBody as OpenAPIV3_1.RequestBodyObject | undefined
    if (requestBody) requestBody.required = false
  }
}

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
  const returnForm = document.paths?.[`${trackingPage}/{token}/return`] as Partial<Record<'get' | 'post', Operation>> | undefined
  if (returnForm?.get) {
    returnForm.get.responses = {
      '200': page("The return form of a delivered parcel (lines offered, reasons, the window's end), or why a return cannot be started; Content-Security-Policy form-action 'self'."),
      '404': page('The token is not a valid link, or the shop offers no returns to customers.'),
    }
  }
  if (returnForm?.post) {
    returnForm.post.requestBody = {
      required: true,
      content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', description: 'quantity.<lineItemId>, reason.<lineItemId> (a configured reason), note', additionalProperties: { type: 'string' } } } },
    }
    returnForm.post.responses = {
      '303': { description: "The return is started: Location is the return's own page (with ?label=later when an automatic label could not be bought)." },
      '403': page("Sent from another site's page, outside the return window, before delivery, or refused by the host's hook (its reason)."),
      '404': page('The token is not a valid link.'),
      '415': page('The body is not an HTML form.'),
      '422': page('The form again, each problem named by its line (over what is left to return, no reason, nothing chosen).'),
      '429': page('Too many forms from this link or address (returns.customerRateLimit); Retry-After says when to try again.'),
    }
  }
  for (const operation of Object.values(document.paths?.[`${trackingPage}/returns/{token}`] ?? {}) as Operation[]) {
    operation.responses = {
      '200': page("A return's own page: its state, what comes next, the label's link, the lines and its timeline; no login."),
      '404': page('The token is not a valid return link.'),
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
  /** Include the customers' return pages beside the tracking page (the `returns.windowDays` option above 0). Default false. */
  customerReturns?: boolean | undefined
  /** The document's `info`. Default: the package's title and version 0.1.0. */
  info?: OpenAPIV3_1.InfoObject | undefined
}

/**
 * @fastify/swagger, an optional peer dependency (it and its YAML parser are some 2.6 MB only a host that
 * asks for the document needs): without it, the document is refused naming what to install (at the
 * plugin's registration, when the openapi option is set).
 */
async function importSwagger() {
  try {
    return await import('@fastify/swagger')
  } catch (error) {
    if (missingPackages(['@fastify/swagger']).length === 0) throw error
    throw Object.assign(new ShipmentsErrors.InvalidOption('openapi', 'the OpenAPI document is built with @fastify/swagger, which this host has not installed: npm install @fastify/swagger'), { cause: error })
  }
}

/** The package's routes as an OpenAPI 3.1 document, to serve or to merge into a host's own. */
export async function shipmentsOpenApiDocument(options: OpenApiDocumentOptions = {}): Promise<OpenAPIV3_1.Document> {
  const prefixes = prefixesWithDefaults(options.prefixes)
  // Fastify and @fastify/swagger load with the first document: the package's import loads neither (a
  // host has its own Fastify loaded anyway; swagger only a host that asks for the document needs).
  // The order exchange's and the tracking page's routes load here too, as they do in the plugin.
  const [{ default: Fastify }, { default: swagger }, { orderExchangeRoutes }, { trackingPageRoutes }] = await Promise.all([
    import('fastify'),
    importSwagger(),
    import('./order-exchange/routes.js'),
    import('./notifications/tracking-page.js'),
  ])
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
  await app.register(returnRoutes, { prefix: prefixes.shipmentApi, service: absent, resolveUser: absent, hasPermission: absent, clock: absent })
  await app.register(documentRoutes, { prefix: prefixes.shipmentApi, service: absent, resolveUser: absent, hasPermission: absent })
  await app.register(packStationRoutes, { prefix: prefixes.shipmentApi, service: absent, resolveUser: absent, hasPermission: absent })
  await app.register(shippingRuleRoutes, { prefix: prefixes.shipmentApi, service: absent, resolveUser: absent, hasPermission: absent })
  await app.register(manifestRoutes, { prefix: prefixes.shipmentApi, service: absent, resolveUser: absent, hasPermission: absent })
  await app.register(batchRoutes, { prefix: prefixes.shipmentApi, service: absent, documents: absent, resolveUser: absent, hasPermission: absent })
  await app.register(addressRoutes, { prefix: prefixes.shipmentApi, service: absent, resolveUser: absent, hasPermission: absent })
  await app.register(customsRoutes, { prefix: prefixes.shipmentApi, service: absent, resolveUser: absent, hasPermission: absent })
  await app.register(gatewayRoutes, { prefix: prefixes.gateway, integrations: absent, registry: absent, bodyLimit: 1 })
  if (options.orderExchange ?? true) {
    const settings = { username: 'documented', password: 'documented', bodyLimit: 1, acceptQueryCredentials: false } as OrderExchangeSettings
    await app.register(orderExchangeRoutes, { prefix: prefixes.orderExchange, service: absent, settings })
  }
  const trackingPage = options.trackingPage === undefined ? '/shipments/track' : options.trackingPage
  const customerReturns = options.customerReturns
    ? { customerReturns: absent, returns: absent, prefix: trackingPage ?? '', baseUrl: 'https://documented.example', rateLimit: { max: 1, windowMs: 1000 }, clock: Date.now }
    : undefined
  if (trackingPage !== null) await app.register(trackingPageRoutes, { prefix: trackingPage, links: absent, shipments: absent, timeZone: 'UTC', layout: absent, customerReturns })
  await app.ready()
  const document = app.swagger() as OpenAPIV3_1.Document
  await app.close()
  describeUnschematizedResponses(document, prefixes, trackingPage)
  describeRawBodies(document, prefixes)
  return document
}
