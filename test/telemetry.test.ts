// OpenTelemetry: the package's spans beneath the host's, and its metrics, read with the SDK's in-memory
// exporter and a metric reader collected by hand. The SDK is registered before the hosts are built, as a
// host registers its own before `app.register`.
import t, { type Test } from 'tap'
import { context, metrics, SpanStatusCode, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, type DataPoint } from '@opentelemetry/sdk-metrics'
import { as, buildTestApp, insertOrder } from './fixtures/app.js'
import { tables } from './fixtures/database.js'
import { easyPostImitation } from './fixtures/easypost-api.js'

const spans = new InMemorySpanExporter()
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }))
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
const reader = new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 3_600_000 })
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }))
const hostTracer = trace.getTracer('the-host')

const API_KEY = 'EZTK-telemetry-key-0123456789abcdef'
const SHIP_TO_STREET = '179 N Harbor Dr'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }

/** The data points of a metric, as the reader collects them now. */
async function points(name: string): Promise<Array<DataPoint<number>>> {
  const { resourceMetrics } = await reader.collect()
  const metric = resourceMetrics.scopeMetrics.filter((scope) => scope.scope.name === 'fastify-shipments').flatMap((scope) => scope.metrics).find((each) => each.descriptor.name === name)
  return (metric?.dataPoints ?? []) as Array<DataPoint<number>>
}
const named = (name: string) => spans.getFinishedSpans().filter((span) => span.name === name)
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId

async function hostWithLabels(t: Test) {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY })
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM } })
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'webhook-secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 2000 } })
  const orderId = await insertOrder(app)
  const { db, schema } = tables(app)
  await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Dr. Steve Brule', address1: SHIP_TO_STREET, city: 'Redondo Beach', state: 'CA', postalCode: '90277', countryCode: 'US' })
  const [shipment] = await app.shipments.shipments.create(orderId)
  const parcel = await app.shipments.deliveries.addParcel(shipment!.id, { weight: { value: '1.5', unit: 'kg' } })
  return { app, imitation, shipmentId: shipment!.id, parcelId: parcel.id }
}

t.test("a status change is a child of the host's request span, and counted by the status it moved to", async (t) => {
  spans.reset()
  const app = await buildTestApp(t)
  const orderId = await insertOrder(app)
  const [shipment] = await app.shipments.shipments.create(orderId)
  const before = (await points('shipments.transitions')).find((point) => point.attributes['shipments.status'] === 'shipped')?.value ?? 0
  const host = await hostTracer.startActiveSpan('POST /shipments/:id', async (span) => {
    const response = await app.inject({ method: 'POST', url: `/shipments/api/shipments/${shipment!.id}`, headers: { ...as('admin'), 'content-type': 'application/json' }, payload: JSON.stringify({ status: 'shipped', trackingNumber: '1Z999AA10123456784' }) })
    t.equal(response.statusCode, 200, response.body)
    span.end()
    return span
  })
  const [update] = named('shipments.shipment.update').filter((span) => span.attributes['shipments.shipment.id'] === shipment!.id)
  t.ok(update, 'the change has its span')
  t.equal(parentOf(update!), host.spanContext().spanId, "beneath the host's request span")
  t.same([update!.attributes['shipments.status.from'], update!.attributes['shipments.status.to']], ['new', 'shipped'])
  const after = (await points('shipments.transitions')).find((point) => point.attributes['shipments.status'] === 'shipped')?.value ?? 0
  t.equal(after - before, 1, 'shipments.transitions counted the move to shipped')
  t.ok(named('shipments.shipment.create').some((span) => span.attributes['shipments.order.id'] === orderId), 'the creation has its span')
})

t.test('a label purchase: its span, the provider call beneath it, counted with its cost; no address or key in any span', async (t) => {
  spans.reset()
  const s = await hostWithLabels(t)
  const response = await s.app.inject({ method: 'POST', url: `/shipments/api/shipments/${s.shipmentId}/parcels/${s.parcelId}/label`, headers: { ...as('admin'), 'content-type': 'application/json' }, payload: JSON.stringify({ integration: 'easypost', carrier: 'USPS', service: 'Priority' }) })
  t.equal(response.statusCode, 200, response.body)
  const [purchase] = named('shipments.label.purchase')
  t.match(purchase!.attributes, { 'shipments.outcome': 'purchased', 'shipments.carrier': 'USPS', 'shipments.parcel.id': s.parcelId, 'shipments.integration': 'easypost' })
  const [call] = named('shipments.provider.purchase_label')
  t.equal(parentOf(call!), purchase!.spanContext().spanId, "the provider's call is the purchase's child")
  t.match(call!.attributes, { 'shipments.provider': 'easypost', 'shipments.carrier': 'USPS', 'shipments.service': 'Priority' })
  t.match(await points('shipments.label.purchases'), [{ attributes: { 'shipments.outcome': 'purchased', 'shipments.carrier': 'USPS' }, value: 1 }])
  t.match(await points('shipments.label.cost'), [{ attributes: { 'shipments.currency': 'USD' }, value: 7.9 }])
  const everything = JSON.stringify(spans.getFinishedSpans().map((span) => [span.name, span.attributes, span.events]))
  t.notOk(everything.includes(SHIP_TO_STREET) || everything.includes(API_KEY) || everything.includes('Montgomery'), 'no address and no key in any span')

  // A refusal: the span's status says so by kind, never in the carrier's words.
  spans.reset()
  const refused = await s.app.inject({ method: 'POST', url: `/shipments/api/shipments/${s.shipmentId}/parcels/${s.parcelId}/label`, headers: { ...as('admin'), 'content-type': 'application/json' }, payload: JSON.stringify({ integration: 'easypost', carrier: 'USPS', service: 'Priority' }) })
  t.equal(refused.statusCode, 409, 'the parcel has its label already')
  const [again] = named('shipments.label.purchase')
  t.equal(again!.status.code, SpanStatusCode.ERROR)
  t.same([again!.attributes['error.type'], again!.attributes['shipments.outcome']], ['SHIPMENTS_LABEL_EXISTS', 'conflict'])
  t.equal(again!.status.message, 'SHIPMENTS_LABEL_EXISTS')
})

t.test("outbox jobs: a span per attempt with the message's id, counted by job and outcome; the gauges read the database", async (t) => {
  spans.reset()
  const app = await buildTestApp(t)
  const orderId = await insertOrder(app)
  const [created] = await app.shipments.shipments.create(orderId)
  // A cancel changes what the order's shipments hold: a job decides its attention row again.
  await app.shipments.shipments.update(created.id, { status: 'cancelled' })
  const deadline = Date.now() + 10_000
  while (named('shipments.outbox.job').length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  const [job] = named('shipments.outbox.job')
  t.ok(job, 'a job ran in its span')
  t.match(job!.attributes, { 'messaging.message.id': /^[0-9a-f-]{36}$/, 'shipments.outbox.name': /\S/, 'shipments.outcome': /^(done|skipped|retry|failed)$/ })
  const stored = await app.shipments.outbox.list({ kind: 'job' })
  t.ok(stored.some((message) => message.id === job!.attributes['messaging.message.id']), "the span's message id is the stored message's")
  t.ok((await points('shipments.outbox.deliveries')).some((point) => point.attributes['shipments.outbox.name'] === job!.attributes['shipments.outbox.name']), 'counted')
  const backlog = await points('shipments.outbox.backlog')
  t.ok(backlog.length > 0 && backlog.every((point) => Number.isInteger(point.value) && point.value >= 0), 'the backlog gauge is read from the database')
  t.ok((await points('shipments.outbox.oldest_pending.age')).length > 0)
  t.ok((await points('shipments.attention.orders')).length > 0)
})
