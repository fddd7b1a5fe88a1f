// The figures of a label batch (issue 47): 200 parcels bought through a batch (the durable job, its
// bounded concurrency) against the same 200 purchases one at a time through the package, both on the
// tests' local EasyPost imitation answering each call after a delay as a provider across the internet
// does; and the host's longest event-loop stall while the batch ran.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { FastifyInstance } from 'fastify'
import type {} from 'fastify-shipments'
import { easyPostImitation } from '../../test/fixtures/easypost-api.js'
import { SHIP_TO, startHost } from '../hosts.js'
import { recordFigure } from '../runner.js'
import { ROUNDS, wanted, type Engine, type Label } from '../settings.js'

const EASYPOST_KEY = 'EZTK-bench-batch-key-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
const PARCELS = 200
/** Each of the provider's answers takes this long: EasyPost's own answers take 100 ms and more. */
const PROVIDER_LATENCY_MS = 40

/** `count` shipments of one parcel each, ten to an order. */
async function seedParcels(app: FastifyInstance, round: string, count: number): Promise<Array<{ shipmentId: number; parcelId: number }>> {
  const parcels: Array<{ shipmentId: number; parcelId: number }> = []
  for (let order = 0; parcels.length < count; order++) {
    const orderId = await app.shipments.referenceOrders!.createOrder({ reference: `BATCH-${round}-${order}`, isCompleted: true, shippingAddress: SHIP_TO })
    for (const shipment of await app.shipments.shipments.create(orderId, { count: Math.min(10, count - parcels.length) })) {
      const parcel = await app.shipments.deliveries.addParcel(shipment.id, { weight: { value: '1.5', unit: 'kg' } })
      parcels.push({ shipmentId: shipment.id, parcelId: parcel.id })
    }
  }
  return parcels
}

export async function measureBatches(engine: Engine, label: Label) {
  const throughputName = label('labels a second through a 200-parcel batch / the same purchases one at a time')
  const stallName = label('longest event-loop stall while a 200-parcel batch runs (ms)')
  if (!wanted(throughputName) && !wanted(stallName)) return
  const closers: Array<() => unknown> = []
  const imitation = await easyPostImitation({ teardown: (close) => void closers.push(close) }, { apiKey: EASYPOST_KEY })
  imitation.setLatency(PROVIDER_LATENCY_MS)
  const host = await startHost(engine, 'batches', { deliveries: { shipFrom: SHIP_FROM }, batches: { pollIntervalMs: 50 } }, async (app) => {
    await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'bench-webhook-secret', apiKey: EASYPOST_KEY, apiBaseUrl: imitation.baseUrl } })
    await app.shipments.rules.replace({ rules: [], fallback: { integration: 'easypost', choice: { kind: 'service', carrier: 'USPS', service: 'Priority' } } })
  })
  const { app } = host
  try {
    const ratios: number[] = []
    const stalls: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const one = await seedParcels(app, `${round}-one`, PARCELS)
      const batched = await seedParcels(app, `${round}-batch`, PARCELS)
      let started = performance.now()
      for (const { shipmentId, parcelId } of one) await app.shipments.deliveries.buyLabel(shipmentId, parcelId, { integration: 'easypost', carrier: 'USPS', service: 'Priority', labelFormat: 'PNG' })
      const oneAtATimeMs = performance.now() - started
      const histogram = monitorEventLoopDelay({ resolution: 1 })
      histogram.enable()
      started = performance.now()
      const batch = await app.shipments.batches.create({ shipmentIds: batched.map((each) => each.shipmentId) }, { labelFormat: 'PNG' })
      for (;;) {
        const { batch: now } = await app.shipments.batches.get(batch.id, { perPage: 1 })
        if (now.state === 'finished') {
          if (now.counts.bought !== PARCELS) throw new Error(`${throughputName}: the batch bought ${now.counts.bought} of ${PARCELS}`)
          break
        }
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      const batchMs = performance.now() - started
      histogram.disable()
      ratios.push(oneAtATimeMs / batchMs)
      stalls.push(histogram.max / 1e6)
    }
    const measured = `POST /label-batches of ${PARCELS} parcels (provider answers after ${PROVIDER_LATENCY_MS} ms)`
    if (wanted(throughputName)) recordFigure(throughputName, { measured, against: `${PARCELS} buyLabel calls in a row`, unit: 'x' }, ratios, { min: 1.5 })
    if (wanted(stallName)) recordFigure(stallName, { measured, against: '(absolute)', unit: 'ms' }, stalls, { max: 50 })
  } finally {
    await app.close()
    for (const close of closers) await close()
  }
}
