// What the document service's concerns share: the dependencies, the PDF half loaded on first use, the
// batch read once (its shipments, orders and lines), the slip's date and the document's stamp, and a
// render's refusal of a character no font draws. It knows none of the concerns; they import it.
import { inSpan } from '../telemetry.js'
import type { FastifyBaseLogger } from 'fastify'
import { DocumentErrors, ShipmentsErrors, ShipmentValidationError } from '../errors.js'
import type { OrderLine, OrderStore, OrderSummary, PostalAddress } from '../order-store.js'
import type { Parcel } from '../model/parcel.js'
import type { DeliveryService } from '../deliveries/service.js'
import type { Shipment } from '../model/shipment.js'
import type { ShipmentService } from '../shipments/service.js'
import { onFirstUseOfPeers } from '../lazy.js'
import type { FontStack } from './fonts.js'
import type { CustomsStore } from '../db/customs.js'
import type { ResolvedDocumentsOptions } from './options.js'

/**
 * The optional peer dependencies the PDF half imports (package.json's peerDependenciesMeta): a host
 * that prints none installs none of them.
 */
export const DOCUMENT_PACKAGES = ['pdfkit', 'fontkit', 'bwip-js', '@cantoo/pdf-lib'] as const

/**
 * The PDF libraries and fonts, imported with the first document (see loadDocumentFonts); without the
 * packages, every document is refused with SHIPMENTS_DOCUMENT_PACKAGES_MISSING (501) naming those missing.
 */
export const loadDocumentEngine = onFirstUseOfPeers(
  'the documents (pdfkit, fontkit, bwip-js, @cantoo/pdf-lib)',
  DOCUMENT_PACKAGES,
  (missing) => new DocumentErrors.PackagesMissing(missing.join(' ')),
  () => import('./engine.js'),
)

/** Lets other work run between shipments: a batch of 200 never holds the event loop for long. */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

export interface DocumentServiceDependencies {
  shipments: ShipmentService
  /** Labels' files, the ship-from, and each shipment's ship-to (its own when a correction was accepted, else the order's). */
  deliveries: Pick<DeliveryService, 'labelDocument' | 'shipFrom'> & Partial<Pick<DeliveryService, 'shipTo'>>
  /** Parcels' customs declarations and their forms (the commercial invoice, the forms printed with labels). */
  customs: Pick<CustomsStore, 'declaration' | 'declarationsFor'>
  orderStore: OrderStore
  options: ResolvedDocumentsOptions
  /** The fonts: read once, by the first caller (registration, or the first document). */
  fonts: () => Promise<FontStack>
  logger: FastifyBaseLogger
  timeZone: string
  clock: () => number
}

/** One shipment of a batch with what its documents need, read once. */
export interface Loaded {
  shipment: Shipment
  order: OrderSummary | null
  lines: OrderLine[] | null
  parcels: Parcel[]
  partOfSeveral: boolean
  /** The address the slip shows: the shipment's own ship-to when a correction was accepted, else the order's. */
  shipTo: PostalAddress | null
}

/** The ids of a batch: positive integers, at most `max`, each once (a repeat is dropped). */
export function batchIds(ids: readonly unknown[], max: number): number[] {
  if (ids.length === 0) throw new ShipmentValidationError({ ids: ['Name at least one shipment.'] })
  if (ids.length > max) throw new ShipmentValidationError({ ids: [`A batch holds at most ${max} shipments; ${ids.length} were named.`] })
  const bad = ids.find((id) => !(typeof id === 'number' && Number.isSafeInteger(id) && id >= 1 && id <= 2_147_483_647))
  if (bad !== undefined) throw new ShipmentValidationError({ ids: [`${String(bad).slice(0, 40)} is not a shipment id (a positive integer).`] })
  return [...new Set(ids as number[])]
}

/** A date as the slip prints it, in the site's timezone: 26 November 2026. */
function dateFormatter(timeZone: string) {
  const format = new Intl.DateTimeFormat('en-GB', { timeZone, day: 'numeric', month: 'long', year: 'numeric' })
  return (date: Date) => format.format(date)
}

/** The shared part of one document service: built once, handed to each concern's factory. */
export function createDocumentServiceContext(deps: DocumentServiceDependencies) {
  const { options, shipments, orderStore } = deps
  const fontStack = deps.fonts
  const dateText = dateFormatter(deps.timeZone)
  /** Whole seconds: the stamp in the file changes only when the document is made again a second later. */
  const now = () => new Date(Math.floor(deps.clock() / 1000) * 1000)

  /** Every shipment of the batch, read in its order; a deleted or unknown one refuses the batch (404). */
  async function load(ids: readonly number[]): Promise<Loaded[]> {
    const orders = new Map<number, Promise<{ order: OrderSummary | null; lines: OrderLine[] | null; several: boolean }>>()
    const orderOf = (orderId: number) => {
      let known = orders.get(orderId)
      if (!known) {
        known = (async () => ({
          order: await orderStore.findOrder(orderId),
          lines: orderStore.orderLines ? await orderStore.orderLines(orderId) : null,
          several: (await shipments.list({ orderId, perPage: 2 })).shipments.length > 1,
        }))()
        orders.set(orderId, known)
      }
      return known
    }
    const loaded: Loaded[] = []
    for (const id of ids) {
      const shipment = await shipments.get(id)
      if (!shipment || shipment.dateDeleted !== null) throw new ShipmentsErrors.ShipmentNotFound(id)
      const { order, lines, several } = await orderOf(shipment.orderId)
      // The shipment's read carries its parcels (the row keeps a copy of them).
      const shipTo = deps.deliveries.shipTo ? (await deps.deliveries.shipTo(shipment)).address : (order?.shippingAddress ?? null)
      loaded.push({ shipment, order, lines, parcels: shipment.parcels, partOfSeveral: several, shipTo })
      // An embedded SQLite answers synchronously: without a turn of the loop, 200 shipments' reads would run as one task.
      await yieldToEventLoop()
    }
    return loaded
  }

  /** Runs a render in its span (`shipments.document.render`), turning a character no font draws into the documented 422 (under missingGlyphs 'error'). */
  async function rendering<T>(render: () => Promise<T>): Promise<T> {
    try {
      return await inSpan('shipments.document.render', {}, render)
    } catch (error) {
      if (error instanceof (await loadDocumentEngine()).MissingGlyphError) throw new DocumentErrors.UnsupportedCharacter((error as Error).message)
      throw error
    }
  }

  const batchTitle = (kind: string, batch: readonly Loaded[]) => (batch.length === 1 ? `${kind} ${batch[0]!.shipment.reference}` : `${kind} (${batch.length} shipments)`)

  return { deps, options, fontStack, dateText, now, load, rendering, batchTitle }
}

export type DocumentServiceContext = ReturnType<typeof createDocumentServiceContext>
