// The figure of a label's purchase through the package against the same purchase with EasyPost's
// official client alone, both on the tests' local EasyPost imitation.
import { randomUUID } from 'node:crypto'
import EasyPost from '@easypost/api'
import { easyPostImitation } from '../../test/fixtures/easypost-api.js'
import { SHIP_TO, startHost } from '../hosts.js'
import { compare, plan } from '../runner.js'
import type { Engine, Label } from '../settings.js'

const EASYPOST_KEY = 'EZTK-bench-key-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
/**
 * Shipments seeded for the label figure, ten to an order, each with one parcel (a shop's usual
 * shipment), so a request buys a label and nothing else: the first label of a shipment also gives the
 * shipment its tracking number, through the update path. A purchase takes the next parcel; the counts
 * cover a full run at the rates each engine reaches with room to spare.
 */
const LABEL_SHIPMENTS: Record<Engine, number> = { sqlite: 12_000, postgres: 4_000 }
const LABEL_SHIPMENTS_PER_ORDER = 10

/** The part of the official client the direct side calls. */
type OfficialClientClass = new (
  apiKey: string,
  options: { baseUrl: string },
) => {
  Shipment: {
    create(params: Record<string, unknown>): Promise<{ id: string; rates: Array<{ id: string; carrier: string; service: string }> }>
    buy(id: string, rateId: string): Promise<{ tracking_code: string | null }>
  }
}

/**
 * A host whose routes buy one label each on the local EasyPost imitation (the tests' own, with
 * EasyPost's shapes): `/bench/label` buys a seeded parcel's label through the package's services
 * (intent committed first, the provider's id committed, the label written with history and an event);
 * `/bench/label-direct` makes the same two calls (create the EasyPost shipment, buy its rate) with the
 * official client alone. PNG on both sides, EasyPost's own format, so neither converts.
 */
export async function startLabelHost(engine: Engine) {
  const closers: Array<() => unknown> = []
  const imitation = await easyPostImitation({ teardown: (close) => void closers.push(close) }, { apiKey: EASYPOST_KEY })
  // The CommonJS module's export is the client class (its bundled types do not say so to NodeNext).
  const client = new (EasyPost as unknown as OfficialClientClass)(EASYPOST_KEY, { baseUrl: `${imitation.baseUrl}/` })
  // The parcels are seeded before the rounds and taken in turn, so a request pays for its label only
  // (creating shipments on one growing order would measure that order's ledger).
  const parcels: Array<{ shipmentId: number; parcelId: number }> = []
  let purchases = 0
  const nextParcel = () => {
    const parcel = parcels[purchases++]
    if (!parcel) throw new Error(`the label bench ran out of seeded parcels (${parcels.length}): raise LABEL_SHIPMENTS.${engine}`)
    return parcel
  }
  const host = await startHost(
    engine,
    'labels',
    { deliveries: { shipFrom: SHIP_FROM } },
    async (app) => {
      const seedOrder = async (order: number) => {
        const orderId = await app.shipments.referenceOrders!.createOrder({ reference: `LABELS-${order}`, isCompleted: true, shippingAddress: SHIP_TO })
        for (let index = 0; index < LABEL_SHIPMENTS_PER_ORDER; index++) {
          const shipmentId = (await app.shipments.shipments.create(orderId))[0]!.id
          const parcel = await app.shipments.deliveries.addParcel(shipmentId, { weight: { value: '1.5', unit: 'kg' } })
          parcels.push({ shipmentId, parcelId: parcel.id })
        }
      }
      // Ten orders at a time, as ten connections would.
      for (let order = 0; order < LABEL_SHIPMENTS[engine] / LABEL_SHIPMENTS_PER_ORDER; order += 10) {
        await Promise.all(Array.from({ length: 10 }, (_, index) => seedOrder(order + index)))
      }
      await app.shipments.integrations.create({
        name: 'EasyPost',
        handle: 'easypost',
        providerId: 'easypost',
        settings: { webhookSecret: 'bench-webhook-secret', apiKey: EASYPOST_KEY, apiBaseUrl: imitation.baseUrl },
      })
    },
    (app) => {
      app.post('/bench/label', async () => {
        const { shipmentId, parcelId } = nextParcel()
        const bought = await app.shipments.deliveries.buyLabel(shipmentId, parcelId, { integration: 'easypost', carrier: 'USPS', service: 'Priority', labelFormat: 'PNG' })
        return { trackingNumber: bought.parcel.trackingNumber }
      })
      app.post('/bench/label-direct', async () => {
        const created = await client.Shipment.create({
          to_address: { name: SHIP_TO.name, street1: SHIP_TO.address1, city: SHIP_TO.city, state: SHIP_TO.state, zip: SHIP_TO.postalCode, country: SHIP_TO.country },
          from_address: { name: SHIP_FROM.name, street1: SHIP_FROM.street1, city: SHIP_FROM.city, state: SHIP_FROM.state, zip: SHIP_FROM.postalCode, country: SHIP_FROM.country },
          parcel: { weight: 52.9 },
          reference: `direct-${randomUUID()}`,
          options: { label_format: 'PNG' },
        })
        const rate = created.rates.find((each) => each.carrier === 'USPS' && each.service === 'Priority')
        const bought = await client.Shipment.buy(created.id, rate!.id)
        return { trackingNumber: bought.tracking_code }
      })
    },
  )
  return {
    ...host,
    async close() {
      await host.app.close()
      for (const close of closers) await close()
    },
  }
}

/** Whether BENCH_ONLY leaves the label figure in (seeding its parcels takes a while). */
export const labelFigureWanted = () => !process.env.BENCH_ONLY || 'buy a parcel\'s label'.includes(process.env.BENCH_ONLY) || process.env.BENCH_ONLY.includes('label')

export async function measureLabelPurchase(label: Label, labelHost: { base: string }) {
  await compare(
    label("buy a parcel's label through the package / the same purchase with the official client alone"),
    { min: 0.5 },
    plan(`${labelHost.base}/bench/label`, { body: '{}' }),
    plan(`${labelHost.base}/bench/label-direct`, { body: '{}' }),
  )
}
