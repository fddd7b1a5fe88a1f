// The pack station's page: a scan (a GET form: it changes nothing) opens a slip's shipment or counts an
// item, with the counts carried by the form; "Buy and print" (a POST form) stores the parcel and buys
// its label by the shipping rules. The refusals are the station's own words, shown as an alert.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { PackCounts, PackShipment } from '../pack-station/service.js'
import { packStationPage, type PackStationPageData } from './pack-station-pages.js'
import { adminUserId, formSchema, hide, refusalOf, routePermissions, text, type AdminScreen, type Form } from './screen.js'

const COUNTS = /^\d{1,10}:\d{1,10}(?:,\d{1,10}:\d{1,10}){0,499}$/
const SHIPMENT_ID = /^[1-9]\d{0,9}$/

/** The counts a form carried (`lineItemId:counted,...`); anything else counts nothing. */
function parseCounts(raw: string): PackCounts {
  if (!COUNTS.test(raw)) return []
  return raw.split(',').map((pair) => {
    const [lineItemId, quantity] = pair.split(':').map(Number)
    return { lineItemId: lineItemId!, quantity: quantity! }
  })
}

/** The station's refusals (each worded for a packer), and the admin's usual ones; null for an error to rethrow. */
function packRefusal(error: unknown): string | null {
  const code = (error as { code?: unknown })?.code
  if (typeof code === 'string' && code.startsWith('SHIPMENTS_PACK_')) return (error as Error).message
  return refusalOf(error)
}

const EMPTY: PackStationPageData = { shipment: null, counted: null, refusal: null, printed: null, bought: 0, weight: null }

export function registerPackStationRoutes(screen: AdminScreen) {
  const { scope, options, context, sendPage } = screen
  const station = options.packStation
  const { buyLabels } = routePermissions

  const send = (request: FastifyRequest, reply: FastifyReply, data: PackStationPageData) =>
    sendPage(request, reply, data.shipment && !data.printed ? `Pack station: ${data.shipment.reference}` : 'Pack station', packStationPage(context(request, reply), data), data.refusal ? 422 : 200)

  /** The shipment as the form left it, or the idle station with why it could not be shown. */
  async function current(shipmentId: number, counted: PackCounts): Promise<{ shipment: PackShipment | null; refusal: string | null }> {
    try {
      return { shipment: await station.view(shipmentId, counted), refusal: null }
    } catch (error) {
      const refusal = packRefusal(error)
      if (refusal === null) throw error
      return { shipment: null, refusal }
    }
  }

  scope.get('/pack-station', { schema: hide, config: buyLabels }, async (request, reply) => {
    const query = request.query as Record<string, unknown>
    const code = text(query.code).trim()
    const shipmentRaw = text(query.shipment)
    const counted = parseCounts(text(query.counted))
    const shipmentId = SHIPMENT_ID.test(shipmentRaw) ? Number(shipmentRaw) : null
    if (code === '') return send(request, reply, shipmentId === null ? EMPTY : { ...EMPTY, ...(await current(shipmentId, counted)) })
    try {
      if (shipmentId === null) return send(request, reply, { ...EMPTY, shipment: await station.open(code) })
      const { shipment, line } = await station.scan(shipmentId, code, counted)
      return send(request, reply, { ...EMPTY, shipment, counted: line })
    } catch (error) {
      const refusal = packRefusal(error)
      if (refusal === null) throw error
      // A refused item leaves the shipment as it was; a refused slip leaves the station idle.
      const kept = shipmentId === null ? { shipment: null, refusal: null } : await current(shipmentId, counted)
      return send(request, reply, { ...EMPTY, shipment: kept.shipment, refusal: kept.refusal ?? refusal })
    }
  })

  scope.post<{ Body: Form }>('/pack-station/finish', { schema: formSchema, config: buyLabels }, async (request, reply) => {
    const shipmentRaw = text(request.body.shipment)
    const counted = parseCounts(text(request.body.counted))
    const weightValue = text(request.body.weight).trim()
    const weight = weightValue === '' ? null : { value: weightValue, unit: text(request.body.weightUnit) || 'kg' }
    if (!SHIPMENT_ID.test(shipmentRaw)) return send(request, reply, { ...EMPTY, refusal: 'No shipment is open: scan a packing slip.' })
    const shipmentId = Number(shipmentRaw)
    try {
      const result = await station.finish(shipmentId, { counted, ...(weight ? { weight } : {}) }, { userId: adminUserId(request) })
      return send(request, reply, { ...EMPTY, shipment: result.shipment, printed: result.labels, bought: result.bought })
    } catch (error) {
      const refusal = packRefusal(error)
      if (refusal === null) throw error
      const kept = await current(shipmentId, counted)
      return send(request, reply, { ...EMPTY, shipment: kept.shipment, refusal: kept.refusal ?? refusal, weight })
    }
  })
}
