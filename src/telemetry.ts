// OpenTelemetry through `@opentelemetry/api` only: the host registers its own SDK (and @fastify/otel for
// its request spans); spans are children of whatever span is active (the host's request span), named
// `shipments.*`; metrics come from one meter. Names and attributes are public API
// (docs/operations.md#opentelemetry). Nothing recorded is a secret, an address or a statement: ids,
// names, carriers, outcomes, counts and amounts.
//
// The API is loaded when the plugin registers, and only when something was registered with it already
// (its global, `Symbol.for('opentelemetry.js.api.1')`, exists): importing it costs some 40 ms, more than
// a host without OpenTelemetry should pay at start. Until then, and without it, every call here is a
// no-op of our own. A host registers its SDK before the plugin, as OpenTelemetry's guides do. The API is
// an optional peer dependency (2 MB a host without OpenTelemetry need not carry).
import { readFileSync } from 'node:fs'
import { packageFile } from './package-files.js'
import type { Attributes, Counter, Histogram, Meter, MeterProvider, Span, Tracer } from '@opentelemetry/api'

type Api = typeof import('@opentelemetry/api')

/** The instrumentation scope: the package's name and version, as OpenTelemetry's library guide asks. */
export const INSTRUMENTATION_SCOPE = {
  name: 'fastify-shipments',
  version: (JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }).version,
}

/** The global the API keeps its registrations under (its major version 1). */
const API_GLOBAL = Symbol.for('opentelemetry.js.api.1')

let api: Api | null = null
let tracer: Tracer | null = null

/**
 * Loads the API when a host registered an SDK (or anything else) with it; a no-op otherwise, and once
 * loaded. Called by the plugin at registration.
 */
export async function loadTelemetry(): Promise<void> {
  if (api || !(API_GLOBAL in globalThis)) return
  // An optional peer dependency: a host that registered an SDK has it (the SDK's own peer). One that
  // cannot be found from the package (a strict layout, say) leaves the no-ops in place.
  try {
    api = await import('@opentelemetry/api')
  } catch {
    return
  }
  // A proxy: spans go to a tracer provider the host registers later, too.
  tracer = api.trace.getTracer(INSTRUMENTATION_SCOPE.name, INSTRUMENTATION_SCOPE.version)
}

/** Why a span failed, said by kind only (an error's code or class): its message may carry what must not leave. */
function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string') return code
  return error instanceof Error ? error.name : typeof error
}

const noop = () => undefined
/** The span of work done without OpenTelemetry: takes everything, records nothing. */
const NO_SPAN = { setAttribute: () => NO_SPAN, setAttributes: () => NO_SPAN, setStatus: () => NO_SPAN, end: noop } as unknown as Span

/**
 * Runs `work` in a span, a child of the active one, ended with its outcome: an error sets the span's
 * status and `error.type` (never the error's message) and is thrown on.
 */
export function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  if (!tracer || !api) return work(NO_SPAN)
  const { SpanStatusCode } = api
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span)
    } catch (error) {
      const type = errorType(error)
      span.setAttribute('error.type', type)
      span.setStatus({ code: SpanStatusCode.ERROR, message: type })
      throw error
    } finally {
      span.end()
    }
  })
}

/** A span for work already done (from `startTime` until now), for work worth a span only when it found something. */
export function spanSince(name: string, attributes: Attributes, startTime: number): void {
  tracer?.startSpan(name, { attributes, startTime }).end()
}

/** The package's counters and histograms, made from a meter. */
function makeInstruments(meter: Pick<Meter, 'createCounter' | 'createHistogram'>) {
  return {
    transitions: meter.createCounter('shipments.transitions', { description: 'Shipment status changes, by the status moved to', unit: '{transition}' }),
    outboxDeliveries: meter.createCounter('shipments.outbox.deliveries', { description: 'Attempts of outbox jobs (webhook deliveries, pushes, notifications, ...), by job and outcome', unit: '{attempt}' }),
    trackingEvents: meter.createCounter('shipments.tracking.events', { description: "Inbound carriers' and integrations' events, by outcome", unit: '{event}' }),
    labelPurchases: meter.createCounter('shipments.label.purchases', { description: 'Label purchases, by outcome and carrier', unit: '{purchase}' }),
    labelCost: meter.createCounter('shipments.label.cost', { description: 'What bought labels cost, by currency', unit: '{currency}' }),
    labelPurchaseDuration: meter.createHistogram('shipments.label.purchase.duration', { description: 'How long a label purchase took, provider calls included', unit: 's' }),
  }
}

type Instruments = ReturnType<typeof makeInstruments>
const NO_INSTRUMENT = { add: noop, record: noop } as unknown as Counter & Histogram
const NO_INSTRUMENTS = makeInstruments({ createCounter: () => NO_INSTRUMENT, createHistogram: () => NO_INSTRUMENT })
let made: { provider: MeterProvider; instruments: Instruments } | undefined

/**
 * The instruments of the meter provider registered now. The metrics API has no proxy (a meter taken
 * before the host registers its SDK stays a no-op), so they are made again when the provider changes.
 */
export function instruments(): Instruments {
  if (!api) return NO_INSTRUMENTS
  const provider = api.metrics.getMeterProvider()
  if (made?.provider !== provider) made = { provider, instruments: makeInstruments(provider.getMeter(INSTRUMENTATION_SCOPE.name, INSTRUMENTATION_SCOPE.version)) }
  return made.instruments
}

/** What the observable gauges read, each time the host's SDK collects. */
export interface ObservedFacts {
  /** Pending outbox messages that are due, counted up to a cap. */
  backlog: number
  /** How long the oldest due message has waited, in seconds (0 when none). */
  oldestPendingAgeSeconds: number
  /** Orders on the attention list, counted up to a cap. */
  attentionOrders: number
}

/**
 * Registers the gauges read from the database (one bounded read per collection) with the meter
 * provider registered now; answers the function that removes them (at the plugin's close).
 */
export function observeFacts(read: () => Promise<ObservedFacts>): () => void {
  if (!api) return noop
  const meter = api.metrics.getMeterProvider().getMeter(INSTRUMENTATION_SCOPE.name, INSTRUMENTATION_SCOPE.version)
  const backlog = meter.createObservableGauge('shipments.outbox.backlog', { description: 'Outbox messages due and not yet handled (counted up to 10,000)', unit: '{message}' })
  const oldest = meter.createObservableGauge('shipments.outbox.oldest_pending.age', { description: 'How long the oldest due outbox message has waited', unit: 's' })
  const attention = meter.createObservableGauge('shipments.attention.orders', { description: 'Orders on the attention list (counted up to 10,000)', unit: '{order}' })
  const callback = async (result: { observe(observable: typeof backlog, value: number): void }) => {
    const facts = await read()
    result.observe(backlog, facts.backlog)
    result.observe(oldest, facts.oldestPendingAgeSeconds)
    result.observe(attention, facts.attentionOrders)
  }
  meter.addBatchObservableCallback(callback, [backlog, oldest, attention])
  return () => meter.removeBatchObservableCallback(callback, [backlog, oldest, attention])
}
