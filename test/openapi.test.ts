// The OpenAPI document: served where the host asks, generated from the route schemas, and true: real
// responses of every route, successes and errors, validate against it.
import t from 'tap'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { Validator } from '@seriousme/openapi-schema-validator'
import type { LightMyRequestResponse } from 'fastify'
import { shipmentsOpenApiDocument } from '../src/index.js'
import { as, buildTestApp, orderWithShipments, postUpdate, shipmentRow } from './fixtures/app.js'
import { basicAuth, buildExchangeApp, EXCHANGE_URL, insertExportOrder } from './fixtures/exchange.js'

type Responses = Record<string, { content?: Record<string, { schema?: object }> }>
type Document = { openapi: string; paths: Record<string, Record<string, { responses: Responses }>> }

t.test('real responses of every route validate against the served document', async (t) => {
  const app = await buildExchangeApp(t, { bodyLimit: 64 }, { openapi: { path: '/docs/shipments.json' }, gatewayBodyLimit: 64, trackingPage: { secret: 't'.repeat(32), baseUrl: 'https://shop.example' } })
  const served = await app.inject({ url: '/docs/shipments.json' })
  t.equal(served.statusCode, 200)
  const document = served.json() as Document
  t.equal(document.openapi, '3.1.0')
  t.same(document, await shipmentsOpenApiDocument(), 'the same document the function gives')

  const ajv = new Ajv2020({ strict: false, allErrors: true })
  const checked = new Set<string>()
  /** Finds the documented response for the status (else `default`) and validates a JSON body against it. */
  const check = (response: LightMyRequestResponse, path: string, method: string) => {
    const operation = document.paths[path]?.[method]
    t.ok(operation, `${method.toUpperCase()} ${path} is documented`)
    const documented = operation?.responses[String(response.statusCode)] ?? operation?.responses.default
    t.ok(documented, `${method.toUpperCase()} ${path} documents ${response.statusCode}`)
    checked.add(`${method} ${path} ${response.statusCode}`)
    const type = String(response.headers['content-type'] ?? '').split(';')[0]
    if (!documented?.content) return
    t.ok(type in documented.content, `${method.toUpperCase()} ${path} ${response.statusCode} documents ${type}`)
    const schema = documented.content[type]?.schema
    if (type === 'application/json' && schema) {
      const valid = ajv.validate(schema, response.json())
      t.ok(valid, `${method.toUpperCase()} ${path} ${response.statusCode}: ${ajv.errorsText()}`)
    }
  }

  const { shipmentIds: [id] } = await orderWithShipments(app)
  const update = '/shipments/api/shipments/{id}'
  check(await postUpdate(app, id, { carrier: 'UPS' }), update, 'post')
  check(await postUpdate(app, id, { status: 'bogus' }), update, 'post')
  check(await postUpdate(app, 999_999, {}), update, 'post')
  check(await postUpdate(app, id, { status: 'shipped' }, 'editor'), update, 'post')
  check(await postUpdate(app, id, {}, 'viewer'), update, 'post')
  check(await app.inject({ method: 'POST', url: `/shipments/api/shipments/${id}`, payload: {} }), update, 'post')
  check(await app.inject({ method: 'POST', url: `/shipments/api/shipments/${id}`, headers: { ...as('admin'), 'content-type': 'application/json' }, payload: '{"a":' }), update, 'post')
  check(await app.inject({ url: `/shipments/api/shipments/${id}`, headers: as('viewer') }), update, 'get')
  check(await app.inject({ url: '/shipments/api/shipments/424242', headers: as('viewer') }), update, 'get')
  check(await app.inject({ url: '/shipments/api/shipments?perPage=5', headers: as('viewer') }), '/shipments/api/shipments', 'get')
  check(await app.inject({ url: '/shipments/api/shipments?perPage=500', headers: as('viewer') }), '/shipments/api/shipments', 'get')
  check(await app.inject({ url: `/shipments/api/shipments/${id}/history`, headers: as('viewer') }), '/shipments/api/shipments/{id}/history', 'get')
  check(await app.inject({ url: `/shipments/api/shipments/${id}/history` }), '/shipments/api/shipments/{id}/history', 'get')
  await app.shipments.shipments.recordCheckpoints(id, { trackingNumber: '1Z999AA10123456784', source: 'aftership', checkpoints: [{ occurredAt: new Date('2026-11-21T21:05:00Z'), occurredAtText: '2026-11-21T22:05:00+01:00', message: 'Departed', location: 'Köln, Germany', status: 'InTransit' }] })
  check(await app.inject({ url: `/shipments/api/shipments/${id}/checkpoints`, headers: as('viewer') }), '/shipments/api/shipments/{id}/checkpoints', 'get')
  check(await app.inject({ url: '/shipments/api/shipments/424242/checkpoints', headers: as('viewer') }), '/shipments/api/shipments/{id}/checkpoints', 'get')

  const lineOrder = await app.shipments.referenceOrders!.createOrder({ reference: 'OA1', isCompleted: true, items: [{ name: 'Mug', sku: 'MUG', quantity: 1 }] })
  const [line] = (await app.shipments.orders.orderLines!(lineOrder))!
  const create = '/shipments/api/orders/{orderId}/shipments'
  const post = (payload: Record<string, unknown>, orderId = lineOrder) => app.inject({ method: 'POST', url: `/shipments/api/orders/${orderId}/shipments`, headers: as('admin'), payload })
  check(await post({ items: [{ lineItemId: line.id, quantity: 1 }] }), create, 'post')
  check(await post({ items: [{ lineItemId: line.id, quantity: 1 }] }), create, 'post')
  check(await post({ count: 'many' }), create, 'post')
  check(await post({}, 424242), create, 'post')
  check(await app.inject({ method: 'POST', url: `/shipments/api/orders/${lineOrder}/shipments`, headers: as('viewer'), payload: {} }), create, 'post')
  check(await app.inject({ url: `/shipments/api/orders/${lineOrder}/allocation`, headers: as('viewer') }), '/shipments/api/orders/{orderId}/allocation', 'get')
  check(await app.inject({ url: '/shipments/api/orders/424242/allocation', headers: as('viewer') }), '/shipments/api/orders/{orderId}/allocation', 'get')
  check(await app.inject({ url: '/shipments/api/attention', headers: as('viewer') }), '/shipments/api/attention', 'get')
  check(await app.inject({ url: '/shipments/api/attention?perPage=500', headers: as('viewer') }), '/shipments/api/attention', 'get')

  // Returns (issue 37): the line's one unit shipped, then returned.
  const [lineShipment] = (await app.shipments.shipments.list({ orderId: lineOrder })).shipments
  await app.shipments.shipments.update(lineShipment!.id, { status: 'shipped' })
  const returns = '/shipments/api/orders/{orderId}/returns'
  const requestReturn = (orderId: number, quantity: number, user: Parameters<typeof as>[0] = 'admin') =>
    app.inject({ method: 'POST', url: `/shipments/api/orders/${orderId}/returns`, headers: as(user), payload: { lines: [{ lineItemId: line.id, quantity, reason: 'damaged' }] } })
  const requested = await requestReturn(lineOrder, 1)
  check(requested, returns, 'post')
  check(await requestReturn(lineOrder, 1), returns, 'post')
  check(await requestReturn(424242, 1), returns, 'post')
  check(await requestReturn(lineOrder, 1, 'editor'), returns, 'post')
  const returnId = requested.json().return.id as number
  check(await app.inject({ url: `/shipments/api/orders/${lineOrder}/returnable`, headers: as('viewer') }), '/shipments/api/orders/{orderId}/returnable', 'get')
  check(await app.inject({ url: '/shipments/api/orders/424242/returnable', headers: as('viewer') }), '/shipments/api/orders/{orderId}/returnable', 'get')
  check(await app.inject({ url: '/shipments/api/returns?state=requested', headers: as('viewer') }), '/shipments/api/returns', 'get')
  check(await app.inject({ url: '/shipments/api/returns?state=bogus', headers: as('viewer') }), '/shipments/api/returns', 'get')
  check(await app.inject({ url: `/shipments/api/returns/${returnId}`, headers: as('viewer') }), '/shipments/api/returns/{returnId}', 'get')
  check(await app.inject({ url: '/shipments/api/returns/424242', headers: as('viewer') }), '/shipments/api/returns/{returnId}', 'get')
  check(await app.inject({ url: `/shipments/api/returns/${returnId}/history`, headers: as('viewer') }), '/shipments/api/returns/{returnId}/history', 'get')
  const updateReturn = (payload: Record<string, unknown>) => app.inject({ method: 'POST', url: `/shipments/api/returns/${returnId}`, headers: as('admin'), payload })
  check(await updateReturn({ state: 'authorised' }), '/shipments/api/returns/{returnId}', 'post')
  check(await updateReturn({ state: 'closed' }), '/shipments/api/returns/{returnId}', 'post')
  const label = { integration: 'none', carrier: 'USPS', service: 'Priority', weight: { value: '1', unit: 'kg' } }
  check(await app.inject({ method: 'POST', url: `/shipments/api/returns/${returnId}/label`, headers: as('admin'), payload: label }), '/shipments/api/returns/{returnId}/label', 'post')
  check(await app.inject({ method: 'POST', url: `/shipments/api/returns/${returnId}/label/void`, headers: as('admin') }), '/shipments/api/returns/{returnId}/label/void', 'post')
  const receipt = { lines: [{ lineItemId: line.id, resellable: 1 }] }
  check(await app.inject({ method: 'POST', url: `/shipments/api/returns/${returnId}/receive`, headers: as('admin'), payload: receipt }), '/shipments/api/returns/{returnId}/receive', 'post')

  const trackingPage = '/shipments/track/{token}'
  check(await app.inject({ url: new URL(await app.shipments.trackingLinks!.url(id)).pathname }), trackingPage, 'get')
  check(await app.inject({ url: '/shipments/track/forged-token' }), trackingPage, 'get')
  check(await app.inject({ url: `/shipments/track/${'x'.repeat(65)}` }), trackingPage, 'get')

  const gateway = '/actions/shipments/gateway/handle'
  await app.shipments.integrations.create({ name: 'Hooks', handle: 'hooks', providerId: 'signed-webhook', settings: { secret: 'whsec_' + Buffer.from('a-test-signing-secret-of-32-bytes').toString('base64') } })
  check(await app.inject({ method: 'POST', url: gateway }), gateway, 'post')
  check(await app.inject({ method: 'POST', url: `${gateway}?integration=nope` }), gateway, 'post')
  check(await app.inject({ method: 'POST', url: `${gateway}?integration=hooks`, payload: 'x'.repeat(65) }), gateway, 'post')
  check(await app.inject({ method: 'PUT', url: `${gateway}?integration=hooks`, payload: '{}' }), gateway, 'put')

  const exchange = `${EXCHANGE_URL.replace(/\/process$/, '')}/process`
  await insertExportOrder(app, { reference: 'OA-1' })
  const json = { accept: 'application/json' }
  check(await app.inject({ url: `${EXCHANGE_URL}?action=export`, headers: basicAuth() }), exchange, 'get')
  check(await app.inject({ method: 'POST', url: `${EXCHANGE_URL}?action=shipnotify&order_number=OA-1`, headers: basicAuth() }), exchange, 'post')
  check(await app.inject({ url: `${EXCHANGE_URL}?action=nope`, headers: { ...basicAuth(), ...json } }), exchange, 'get')
  check(await app.inject({ url: `${EXCHANGE_URL}?action=export`, headers: json }), exchange, 'get')
  check(await app.inject({ url: `${EXCHANGE_URL}?action=shipnotify&order_number=none`, headers: { ...basicAuth(), ...json } }), exchange, 'get')
  check(await app.inject({ url: `${EXCHANGE_URL}?action=shipnotify`, headers: { ...basicAuth(), ...json } }), exchange, 'get')
  check(await app.inject({ method: 'POST', url: `${EXCHANGE_URL}?action=shipnotify`, headers: { ...basicAuth(), ...json }, payload: 'x'.repeat(65) }), exchange, 'post')
  check(await app.inject({ url: `${EXCHANGE_URL}?action=shipnotify&order_number=OA-1`, headers: basicAuth() }), exchange, 'get')

  t.equal(checked.size, 51, 'route and status pairs checked')
})

t.test('the document follows the prefixes and leaves out an order exchange that is not mounted', async (t) => {
  const document = (await shipmentsOpenApiDocument({ prefixes: { shipmentApi: '/api/v2/shipments' }, orderExchange: false })) as unknown as Document
  t.same(Object.keys(document.paths).sort(), [
    '/actions/shipments/gateway/handle',
    '/api/v2/shipments/attention',
    '/api/v2/shipments/orders/{orderId}/allocation',
    '/api/v2/shipments/orders/{orderId}/shipments',
    '/api/v2/shipments/shipments',
    '/api/v2/shipments/shipments/{id}',
    '/api/v2/shipments/shipments/{id}/checkpoints',
    '/api/v2/shipments/shipments/{id}/history',
    // Deliveries (issue 34): parcels, rates, labels and the box catalogue.
    '/api/v2/shipments/boxes',
    '/api/v2/shipments/boxes/{boxId}',
    '/api/v2/shipments/shipments/{id}/parcels',
    '/api/v2/shipments/shipments/{id}/parcels/accept-suggestion',
    '/api/v2/shipments/shipments/{id}/parcels/suggest',
    '/api/v2/shipments/shipments/{id}/parcels/{parcelId}',
    '/api/v2/shipments/shipments/{id}/parcels/{parcelId}/rates',
    '/api/v2/shipments/shipments/{id}/parcels/{parcelId}/label',
    '/api/v2/shipments/shipments/{id}/parcels/{parcelId}/label/void',
    '/api/v2/shipments/shipments/{id}/parcels/{parcelId}/label/operations',
    // Across borders (issue 48): the forms kept with an international label, and the commercial invoice.
    '/api/v2/shipments/shipments/{id}/parcels/{parcelId}/forms',
    '/api/v2/shipments/shipments/{id}/parcels/{parcelId}/commercial-invoice',
    '/api/v2/shipments/ship-from',
    // Returns (issue 37).
    '/api/v2/shipments/orders/{orderId}/returnable',
    '/api/v2/shipments/orders/{orderId}/returns',
    '/api/v2/shipments/returns',
    '/api/v2/shipments/returns/{returnId}',
    '/api/v2/shipments/returns/{returnId}/history',
    '/api/v2/shipments/returns/{returnId}/label',
    '/api/v2/shipments/returns/{returnId}/label/void',
    '/api/v2/shipments/returns/{returnId}/receive',
    // Documents (issue 35): packing slips, pick lists, labels merged with slips (application/pdf).
    '/api/v2/shipments/shipments/{id}/packing-slip',
    '/api/v2/shipments/documents/packing-slips',
    '/api/v2/shipments/documents/pick-list',
    '/api/v2/shipments/documents/labels',
    // The pack station (issue 47): a slip opened, an item scanned, a parcel finished.
    '/api/v2/shipments/pack-station/open',
    '/api/v2/shipments/pack-station/shipments/{id}/scan',
    '/api/v2/shipments/pack-station/shipments/{id}/finish',
    // Shipping rules (issue 47): the rules, replaced whole, and a shipment's dry run.
    '/api/v2/shipments/shipping-rules',
    '/api/v2/shipments/shipments/{id}/shipping-rules',
    // Issue 47: one print job (PDF or ZPL) and the day's manifest.
    '/api/v2/shipments/documents/print-job',
    '/api/v2/shipments/manifests',
    '/api/v2/shipments/manifests/eligible',
    '/api/v2/shipments/manifests/{id}',
    '/api/v2/shipments/manifests/{id}/form',
    // Label batches (issue 47).
    '/api/v2/shipments/label-batches',
    '/api/v2/shipments/label-batches/{id}',
    '/api/v2/shipments/label-batches/{id}/retry',
    '/api/v2/shipments/label-batches/{id}/cancel',
    '/api/v2/shipments/label-batches/{id}/print',
    // Verified addresses (issue 48).
    '/api/v2/shipments/address-verification',
    '/api/v2/shipments/shipments/{id}/address-check',
    '/api/v2/shipments/shipments/{id}/address-check/accept',
    '/api/v2/shipments/shipments/{id}/address-check/as-is',
    // Customs (issue 48): the shop's settings and a parcel's declaration.
    '/api/v2/shipments/customs-settings',
    '/api/v2/shipments/shipments/{id}/parcels/{parcelId}/customs',
    '/shipments/track/{token}',
  ].sort())
  const withoutPage = (await shipmentsOpenApiDocument({ trackingPage: null, orderExchange: false })) as unknown as Document
  t.notOk('/shipments/track/{token}' in withoutPage.paths, 'trackingPage: null leaves the page out')
  const movedPage = (await shipmentsOpenApiDocument({ trackingPage: '/parcel' })) as unknown as Document
  t.ok('/parcel/{token}' in movedPage.paths, 'at the prefix given')
  const app = await buildTestApp(t)
  t.equal((await app.inject({ url: '/openapi.json' })).statusCode, 404, 'not served unless asked')
})

// Regression: the route applied `enabled` (additional properties pass) but the document left it out.
t.test('the update body documents enabled and items, and the route applies enabled', async (t) => {
  type Body = { requestBody: { content: Record<string, { schema: { properties: Record<string, { description?: string }> } }> } }
  const document = (await shipmentsOpenApiDocument()) as unknown as { paths: Record<string, Record<string, Body>> }
  const properties = document.paths['/shipments/api/shipments/{id}'].post.requestBody.content['application/json'].schema.properties
  t.match(properties.enabled, { description: /^False frees the shipment's quantities/, anyOf: [{ type: 'boolean' }, { type: 'null' }] })
  t.match(properties.items, { description: /^The order lines the shipment holds/ })

  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const disabled = await postUpdate(app, id, { enabled: false })
  t.same([disabled.statusCode, disabled.json().success, disabled.json().shipment.id], [200, true, id])
  t.equal((await shipmentRow(app, id)).enabled, false, 'stored')
  const refused = await postUpdate(app, id, { enabled: 'yes' })
  t.same([refused.statusCode, refused.json()], [422, { success: false, errors: { enabled: ['Enabled must be true or false.'] }, errorCode: 'SHIPMENTS_VALIDATION_FAILED' }], 'the per-field envelope, not a schema 400')
  t.equal((await shipmentRow(app, id)).enabled, false, 'unchanged')
})

type SchemaObject = Record<string, unknown>
type Operation = {
  parameters?: Array<{ name: string; schema?: SchemaObject }>
  requestBody?: { content: Record<string, { schema?: SchemaObject }> }
  responses: Record<string, { content?: Record<string, { schema?: SchemaObject }> }>
}
type OpenApi = { paths: Record<string, Record<string, Operation>> }

/** Every Schema Object of the document, named by where it is. */
function schemaObjects(document: OpenApi): Array<[string, SchemaObject]> {
  const found: Array<[string, SchemaObject]> = []
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const at = `${method.toUpperCase()} ${path}`
      for (const parameter of operation.parameters ?? []) if (parameter.schema) found.push([`${at} parameter ${parameter.name}`, parameter.schema])
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) if (media.schema) found.push([`${at} body ${type}`, media.schema])
      for (const [status, response] of Object.entries(operation.responses)) {
        for (const [type, media] of Object.entries(response.content ?? {})) if (media.schema) found.push([`${at} ${status} ${type}`, media.schema])
      }
    }
  }
  return found
}

/** Properties of a body schema that say nothing of their value (no type, no alternatives, no constant), by path. */
function untypedProperties(schema: SchemaObject, at: string): string[] {
  const typed = (inner: SchemaObject) => ['type', 'anyOf', 'oneOf', 'allOf', '$ref', 'const', 'enum'].some((key) => key in inner)
  const problems: string[] = []
  const properties = (schema.properties ?? {}) as Record<string, SchemaObject>
  for (const [name, inner] of Object.entries(properties)) {
    if (!typed(inner)) problems.push(`${at}.${name}`)
    problems.push(...untypedProperties(inner, `${at}.${name}`))
  }
  for (const alternative of [...((schema.anyOf ?? []) as SchemaObject[]), ...((schema.oneOf ?? []) as SchemaObject[])]) problems.push(...untypedProperties(alternative, at))
  if (schema.items && typeof schema.items === 'object') problems.push(...untypedProperties(schema.items as SchemaObject, `${at}[]`))
  return problems
}

t.test('the whole document is valid OpenAPI 3.1, its schemas valid JSON Schema 2020-12, and every body field typed', async (t) => {
  const variants = {
    default: await shipmentsOpenApiDocument(),
    'moved prefixes, no order exchange': await shipmentsOpenApiDocument({ prefixes: { shipmentApi: '/api/v2', gateway: '/hooks', orderExchange: '/ss' }, orderExchange: false, trackingPage: '/parcel' }),
    'no tracking page': await shipmentsOpenApiDocument({ trackingPage: null, info: { title: 'Shop', version: '9.9.9' } }),
    "customers' return pages": await shipmentsOpenApiDocument({ customerReturns: true }),
  }
  const ajv = new Ajv2020({ strict: false })
  for (const [name, document] of Object.entries(variants)) {
    const result = await new Validator().validate(document as unknown as Record<string, unknown>)
    t.same(result, { valid: true }, `${name}: valid against the OpenAPI 3.1 schema`)
    for (const [at, schema] of schemaObjects(document as unknown as OpenApi)) {
      t.ok(ajv.validateSchema(schema), `${name}: ${at} is a JSON Schema 2020-12 schema ${ajv.errorsText()}`)
      t.doesNotThrow(() => ajv.compile(schema), `${name}: ${at} compiles`)
    }
  }

  const document = variants.default as unknown as OpenApi
  const bodies = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations).flatMap(([method, operation]) => (operation.requestBody ? [[`${method.toUpperCase()} ${path}`, operation.requestBody] as const] : [])),
  )
  t.same(bodies.map(([at]) => at).sort(), [
    'PATCH /actions/shipments/gateway/handle',
    'POST /actions/shipments/gateway/handle',
    'POST /actions/shippingplatformconnect/orders/process',
    'POST /shipments/api/boxes',
    'POST /shipments/api/boxes/{boxId}',
    'POST /shipments/api/documents/print-job',
    'POST /shipments/api/label-batches',
    'POST /shipments/api/manifests',
    'POST /shipments/api/orders/{orderId}/returns',
    'POST /shipments/api/orders/{orderId}/shipments',
    'POST /shipments/api/pack-station/open',
    'POST /shipments/api/pack-station/shipments/{id}/finish',
    'POST /shipments/api/pack-station/shipments/{id}/scan',
    'POST /shipments/api/returns/{returnId}',
    'POST /shipments/api/returns/{returnId}/label',
    'POST /shipments/api/returns/{returnId}/receive',
    'POST /shipments/api/shipments/{id}',
    'POST /shipments/api/shipments/{id}/address-check',
    'POST /shipments/api/shipments/{id}/parcels',
    'POST /shipments/api/shipments/{id}/parcels/accept-suggestion',
    'POST /shipments/api/shipments/{id}/parcels/suggest',
    'POST /shipments/api/shipments/{id}/parcels/{parcelId}',
    'POST /shipments/api/shipments/{id}/parcels/{parcelId}/label',
    'POST /shipments/api/shipments/{id}/parcels/{parcelId}/rates',
    'PUT /actions/shipments/gateway/handle',
    'PUT /shipments/api/address-verification',
    'PUT /shipments/api/customs-settings',
    'PUT /shipments/api/ship-from',
    'PUT /shipments/api/shipments/{id}/parcels/{parcelId}/customs',
    'PUT /shipments/api/shipping-rules',
  ], 'every route that reads a body documents it')
  for (const [at, body] of bodies) {
    for (const [type, media] of Object.entries(body.content)) {
      t.ok(media.schema && ('type' in media.schema || 'anyOf' in media.schema), `${at} ${type} has a schema`)
      t.same(untypedProperties(media.schema ?? {}, `${at} ${type}`), [], `${at} ${type}: every field typed`)
    }
  }
  const update = document.paths['/shipments/api/shipments/{id}'].post.requestBody!.content['application/json'].schema as { properties: Record<string, unknown> }
  t.same(Object.keys(update.properties).sort(), [
    'carrier', 'dateScheduledShip', 'enabled', 'externalCode', 'fields', 'fulfillmentNotes', 'integrationHandle', 'items',
    'service', 'shippingNotes', 'status', 'statusMessage', 'trackingNumber', 'trackingUrl',
  ], 'spec 2.2 with items and enabled')
  t.match(update.properties.items, { anyOf: [{ type: 'array', maxItems: 500, items: { type: 'object', required: ['lineItemId', 'quantity'] } }, { type: 'null' }] })
  const create = document.paths['/shipments/api/orders/{orderId}/shipments'].post.requestBody!.content['application/json'].schema as { properties: Record<string, unknown> }
  t.match(create.properties, { count: { type: 'integer', minimum: 1, maximum: 100 }, items: { type: 'array' }, rule: { type: 'string' } })

  // The checks bite: a document with a wrong OpenAPI field or a wrong schema keyword fails them.
  const broken = structuredClone(variants.default) as unknown as OpenApi & { paths: Record<string, Record<string, { requestBody: { required: unknown } }>> }
  broken.paths['/shipments/api/shipments/{id}'].post.requestBody.required = 'no'
  t.equal((await new Validator().validate(broken as unknown as Record<string, unknown>)).valid, false, 'a wrong OpenAPI field is caught')
  t.notOk(ajv.validateSchema({ type: 'object', properties: { enabled: { type: 'bool' } } }), 'a wrong schema type is caught')
})

t.test('typed bodies change no validation: wrong types are the per-field 422, a body that is no object the same 400', async (t) => {
  const app = await buildTestApp(t)
  const { orderId, shipmentIds: [id] } = await orderWithShipments(app)
  const send = (url: string, payload: string) => app.inject({ method: 'POST', url, headers: { ...as('admin'), 'content-type': 'application/json' }, payload })
  for (const url of [`/shipments/api/shipments/${id}`, `/shipments/api/orders/${orderId}/shipments`]) {
    for (const payload of ['[1, 2]', '"text"', '5', 'null', 'true']) {
      const response = await send(url, payload)
      t.same([response.statusCode, response.json()], [400, { name: 'Bad Request', message: 'body must be object', code: 0, status: 400, errorCode: 'SHIPMENTS_VALIDATION_FAILED' }], `${url} ${payload}`)
    }
  }
  const update = await send(`/shipments/api/shipments/${id}`, JSON.stringify({ carrier: 5, status: 'lost', items: 'all', unknownKey: 1 }))
  t.same([update.statusCode, update.json()], [422, { success: false, errors: { carrier: ['Carrier must be a string.'], targetStatusCode: ['Target Status Code is invalid.'] }, errorCode: 'SHIPMENTS_VALIDATION_FAILED' }])
  t.match(await shipmentRow(app, id), { carrier: null, status: 'new' }, 'nothing changed')
  const scheduled = await send(`/shipments/api/shipments/${id}`, JSON.stringify({ dateScheduledShip: '1700000000', trackingNumber: '', extra: { a: 1 } }))
  t.equal(scheduled.statusCode, 200, 'Unix seconds as a string and unknown keys are accepted, as before')
  t.equal((await shipmentRow(app, id)).dateScheduledShip?.toISOString(), '2023-11-14T22:13:20.000Z')
  for (const [payload, errors] of [
    [{ count: 0 }, { count: ['Count must be an integer from 1 to 100.'] }],
    [{ count: '2' }, { count: ['Count must be an integer from 1 to 100.'] }],
    [{ rule: 5 }, { rule: ['Rule must be the name of a split rule.'] }],
  ] as const) {
    const response = await send(`/shipments/api/orders/${orderId}/shipments`, JSON.stringify(payload))
    t.same([response.statusCode, response.json()], [422, { success: false, errors, errorCode: 'SHIPMENTS_VALIDATION_FAILED' }], JSON.stringify(payload))
  }
  const created = await send(`/shipments/api/orders/${orderId}/shipments`, JSON.stringify({ count: 2, note: 'ignored' }))
  t.same([created.statusCode, created.json().shipments.length], [200, 2], 'unknown keys are ignored, as before')
})
