// The figures of the documents, in absolute terms: a packing slip's and a pick list's pages a second,
// and the longest stall of the event loop while the pick list is made.
import type { FastifyInstance } from 'fastify'
import type { LoadPlan } from '../load.js'
import { SHIP_TO, type BenchHost } from '../hosts.js'
import { measureDocument } from '../runner.js'
import { CONNECTIONS, SECONDS, wanted, type Label } from '../settings.js'

/** `count` orders of three lines (of 60 SKUs) with one shipment of all of them, for the slip and the pick list. */
export async function seedPickOrders(app: FastifyInstance, count: number, into: number[]) {
  for (let index = 0; index < count; index++) {
    const items = [0, 1, 2].map((line) => {
      const sku = (index * 7 + line * 13) % 60
      return { name: `Organic T-shirt ${sku} “Größe M” 🍵`, sku: `SKU-${sku}`, quantity: 1 + line }
    })
    const orderId = await app.shipments.referenceOrders!.createOrder({ reference: `PICK-${index}`, isCompleted: true, shippingAddress: SHIP_TO, items })
    const lines = (await app.shipments.orders.orderLines!(orderId))!
    const [shipment] = await app.shipments.shipments.create(orderId, { items: lines.map((line) => ({ lineItemId: line.id, quantity: line.quantity })) })
    into.push(shipment.id)
  }
}

export async function measureDocuments(label: Label, host: BenchHost, pickShipments: number[]) {
  const slipName = label('packing slip of a shipment of 3 lines')
  const pickName = label('pick list of 200 shipments')
  if (wanted(slipName) || wanted(pickName)) {
    const documentGet = (url: string, connections = CONNECTIONS): LoadPlan => ({ url, method: 'GET', headers: { 'x-bench-user': 'admin' }, durationSeconds: SECONDS, connections })
    const pagesOf = async (url: string) => {
      const response = await host.app.inject({ url, headers: { 'x-bench-user': 'admin' } })
      if (response.statusCode !== 200) throw new Error(`${url} answered ${response.statusCode}: ${response.body.slice(0, 500)}`)
      const pages = (response.rawPayload.toString('latin1').match(/\/Type\s*\/Page(?![s\w])/g) ?? []).length
      if (pages === 0) throw new Error(`${url}: no page in the PDF`)
      return pages
    }
    const slipUrl = `/shipments/api/shipments/${pickShipments[0]}/packing-slip`
    const pickUrl = `/shipments/api/documents/pick-list?ids=${pickShipments.join(',')}`
    await measureDocument(slipName, documentGet(`${host.base}${slipUrl}`), await pagesOf(slipUrl), 20)
    // One connection and rounds of at least 10 s: a pick list of 200 shipments takes seconds on a busy machine.
    await measureDocument(pickName, { ...documentGet(`${host.base}${pickUrl}`, 1), durationSeconds: Math.max(SECONDS, 10) }, await pagesOf(pickUrl), 5, 50)
  }
}
