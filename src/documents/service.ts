// The documents of shipments as PDF bytes: a packing slip, the packing slips of a batch, the batch's
// pick list, and the batch's labels merged with its slips. `app.shipments.documents`.
import type { FastifyBaseLogger } from 'fastify'
import { DocumentErrors, ShipmentsErrors, ShipmentValidationError } from '../errors.js'
import { getHttp, HttpGetError } from '../http/outbound.js'
import type { OrderLine, OrderStore, OrderSummary } from '../orders/order-store.js'
import type { Parcel } from '../deliveries/parcel.js'
import type { DeliveryService } from '../deliveries/service.js'
import type { Shipment } from '../shipments/shipment.js'
import type { ShipmentService } from '../shipments/service.js'
import { onFirstUse } from '../lazy.js'
import type { FontStack } from './fonts.js'
import type { MergePart } from './merge.js'
import type { PackingSlipData, PackingSlipGroup, PackingSlipLine } from './model.js'
import type { LabelFile, ResolvedDocumentsOptions } from './options.js'
import type { PickedLine } from './pick-list.js'

/** The PDF libraries and fonts, imported with the first document (see loadDocumentFonts). */
export const loadDocumentEngine = onFirstUse('the documents (pdfkit, fontkit, bwip-js, @cantoo/pdf-lib)', () => import('./engine.js'))

/** Redirects a label fetch follows, each checked like the first URL (file stores redirect once or twice). */
const LABEL_MAX_REDIRECTS = 5
/** The types a label file may be served as (the bytes are checked as PDF, PNG or JPEG after). */
const LABEL_CONTENT_TYPES = ['application/pdf', 'image/png', 'image/jpeg', 'image/jpg', 'application/octet-stream', 'binary/octet-stream']

/** Lets other work run between shipments: a batch of 200 never holds the event loop for long. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

export interface DocumentServiceDependencies {
  shipments: ShipmentService
  deliveries: Pick<DeliveryService, 'labelDocument'>
  orderStore: OrderStore
  options: ResolvedDocumentsOptions
  /** The fonts: read once, by the first caller (registration, or the first document). */
  fonts: () => Promise<FontStack>
  logger: FastifyBaseLogger
  timeZone: string
  clock: () => number
}

export type DocumentService = ReturnType<typeof createDocumentService>

/** One shipment of a batch with what its documents need, read once. */
interface Loaded {
  shipment: Shipment
  order: OrderSummary | null
  lines: OrderLine[] | null
  parcels: Parcel[]
  partOfSeveral: boolean
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

export function createDocumentService(deps: DocumentServiceDependencies) {
  const { options, shipments, deliveries, orderStore, logger } = deps
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
      loaded.push({ shipment, order, lines, parcels: shipment.parcels, partOfSeveral: several })
      // An embedded SQLite answers synchronously: without a turn of the loop, 200 shipments' reads would run as one task.
      await yieldToEventLoop()
    }
    return loaded
  }

  function slipData({ shipment, order, lines, parcels, partOfSeveral }: Loaded): PackingSlipData {
    const byId = new Map((lines ?? []).map((line) => [line.id, line]))
    const lineOf = (lineItemId: number, quantity: number, fallback?: { sku: string | null; name: string }): PackingSlipLine => {
      const line = byId.get(lineItemId)
      return { lineItemId, sku: line?.sku ?? fallback?.sku ?? null, name: line?.name ?? fallback?.name ?? `Line ${lineItemId}`, quantity, ordered: line?.quantity ?? null }
    }
    // An order-level shipment holds the whole order: its shippable lines.
    const shipmentLines: PackingSlipLine[] =
      shipment.items.length > 0
        ? shipment.items.map((item) => lineOf(item.lineItemId, item.quantity, item))
        : (lines ?? []).filter((line) => line.shippable).map((line) => lineOf(line.id, line.quantity))
    let groups: PackingSlipGroup[] = [{ title: null, parcel: null, lines: shipmentLines }]
    const withItems = parcels.filter((parcel) => parcel.items.length > 0)
    if (withItems.length > 0) {
      const left = new Map(shipmentLines.map((line) => [line.lineItemId, line.quantity]))
      groups = parcels.map((parcel, index) => {
        const items = parcel.items.map((item) => {
          left.set(item.lineItemId, (left.get(item.lineItemId) ?? 0) - item.quantity)
          const known = shipmentLines.find((line) => line.lineItemId === item.lineItemId)
          return lineOf(item.lineItemId, item.quantity, known ? { sku: known.sku, name: known.name } : undefined)
        })
        return {
          title: `Parcel ${index + 1} of ${parcels.length}`,
          parcel: { id: parcel.id, trackingNumber: parcel.trackingNumber, carrier: parcel.carrier, weight: parcel.weight.value, weightUnit: parcel.weight.unit },
          lines: items,
        }
      })
      const loose = shipmentLines.filter((line) => (left.get(line.lineItemId) ?? 0) > 0).map((line) => ({ ...line, quantity: left.get(line.lineItemId)! }))
      if (loose.length > 0) groups.push({ title: 'Not in a parcel', parcel: null, lines: loose })
    }
    return {
      shop: { name: options.shop.name, address: options.shop.address, logo: options.shop.logo },
      shipment: { id: shipment.id, reference: shipment.reference, status: shipment.status, carrier: shipment.carrier, service: shipment.service, trackingNumber: shipment.trackingNumber },
      order: { id: shipment.orderId, reference: order?.reference ?? String(shipment.orderId), dateOrdered: order?.dateOrdered ?? null },
      shipTo: order?.shippingAddress ?? null,
      groups,
      notes: [shipment.shippingNotes, order?.customerNotes].filter((note): note is string => typeof note === 'string' && note.trim() !== ''),
      partOfSeveral,
    }
  }

  /** Runs a render, turning a character no font draws into the documented 422 (under missingGlyphs 'error'). */
  async function rendering<T>(render: () => Promise<T>): Promise<T> {
    try {
      return await render()
    } catch (error) {
      if (error instanceof (await loadDocumentEngine()).MissingGlyphError) throw new DocumentErrors.UnsupportedCharacter((error as Error).message)
      throw error
    }
  }

  /** The package's own slips, one after another in one PDF, each with its page footers. */
  async function writeSlips(batch: readonly Loaded[], title: string, pageCounts: number[] = []): Promise<Buffer> {
    const { DocumentWriter, referenceBarcode, writePackingSlip } = await loadDocumentEngine()
    const writer = new DocumentWriter(await fontStack(), { size: options.pageSize, title, date: now() })
    const logo = options.show.logo && options.shop.logo ? (writer.doc as PDFKit.PDFDocument & { openImage(src: Buffer): unknown }).openImage(Buffer.from(options.shop.logo)) : null
    let replaced = false
    for (const loaded of batch) {
      const slip = slipData(loaded)
      const barcode = options.show.barcode ? referenceBarcode(slip.shipment.reference) : null
      writePackingSlip(writer, slip, options.show, { barcode, logo, dateText }, options.title)
      const footerName = [slip.shop.name, `${options.title} ${slip.shipment.reference}`].filter(Boolean).join(' · ')
      pageCounts.push(writer.footers((page, pages) => `${footerName} · Page ${page} of ${pages}`))
      replaced ||= JSON.stringify(slip).includes('\uFFFD')
      await yieldToEventLoop()
    }
    if (replaced) logger.debug('A packing slip held text none of its fonts can draw: shown as U+FFFD')
    return writer.bytes()
  }

  /** The slips of a batch: the package's layout, or the host's renderer's PDFs merged. */
  async function slips(batch: readonly Loaded[], title: string): Promise<Buffer> {
    const render = options.renderPackingSlip
    if (!render) return rendering(() => writeSlips(batch, title))
    const parts: MergePart[] = []
    for (const loaded of batch) parts.push({ kind: 'pdf', bytes: await hostSlip(loaded) })
    return (await loadDocumentEngine()).mergeParts(parts, { title, date: now() })
  }

  async function hostSlip(loaded: Loaded): Promise<Uint8Array> {
    let bytes: Uint8Array
    try {
      bytes = await options.renderPackingSlip!(slipData(loaded))
    } catch (error) {
      throw new DocumentErrors.RendererFailed(loaded.shipment.reference, (error as Error)?.message ?? String(error))
    }
    if (!(bytes instanceof Uint8Array) || (await loadDocumentEngine()).partKind(bytes) !== 'pdf') throw new DocumentErrors.RendererFailed(loaded.shipment.reference, 'it did not return the bytes of a PDF')
    return bytes
  }

  /**
   * The default label fetch, under the rules of outbound webhooks: the URL is the provider's answer,
   * so it may not reach the host's own network (nor a redirect from it), and size, type and time are bounded.
   */
  async function fetchLabelFile(label: LabelFile): Promise<Uint8Array> {
    if (options.fetchLabel) return options.fetchLabel(label)
    return getHttp({
      url: label.url,
      timeoutMs: options.labelTimeoutMs,
      maxBytes: options.labelMaxBytes,
      maxRedirects: LABEL_MAX_REDIRECTS,
      allowPrivateAddresses: options.allowPrivateAddresses,
      acceptsContentType: (type) => type === null || LABEL_CONTENT_TYPES.includes(type),
      what: "the label's host",
      file: 'the label',
    })
  }

  /** A labelled parcel's label as a part to merge: fetched in its format, or as PDF when that is not PDF, PNG or JPEG. */
  async function labelPart(shipmentId: number, parcel: Parcel): Promise<MergePart> {
    const label = parcel.label!
    const { partKind } = await loadDocumentEngine()
    let url = label.url
    let format = label.format.toUpperCase()
    try {
      if (!['PDF', 'PNG', 'JPG', 'JPEG'].includes(format)) {
        // ZPL and EPL2 print on thermal printers only: the provider converts (EasyPost from PNG).
        ;({ url, format } = await deliveries.labelDocument(shipmentId, parcel.id, 'PDF'))
      }
      const bytes = await fetchLabelFile({ url, format, shipmentId, parcelId: parcel.id })
      const kind = partKind(bytes)
      if (kind === null) throw new Error('the file is not a PDF, PNG or JPEG')
      return kind === 'pdf' ? { kind, bytes } : { kind, bytes, widthInches: options.labelWidthInches }
    } catch (error) {
      // Whatever went wrong (the provider's conversion, the file's host, a deadline), the document names the parcel.
      logger.warn({ err: error, shipmentId, parcelId: parcel.id }, 'A label could not be fetched for the labels document')
      if (error instanceof HttpGetError && error.refused) throw new DocumentErrors.LabelRefused(parcel.id, `${error.message}; documents.allowPrivateAddresses allows such hosts`)
      throw new DocumentErrors.LabelUnavailable(parcel.id, (error as Error)?.message ?? String(error))
    }
  }

  const batchTitle = (kind: string, batch: readonly Loaded[]) => (batch.length === 1 ? `${kind} ${batch[0]!.shipment.reference}` : `${kind} (${batch.length} shipments)`)

  return {
    /** The most shipments one batch document takes (`documents.maxBatchSize`). */
    maxBatchSize: options.maxBatchSize,

    /** What the packing slip of a shipment shows, as data (what a host's renderer receives). */
    async packingSlipData(shipmentId: number): Promise<PackingSlipData> {
      const [loaded] = await load(batchIds([shipmentId], 1))
      return slipData(loaded!)
    },

    /** The packing slip of one shipment, a PDF. 404 for a deleted or unknown shipment. */
    async packingSlip(shipmentId: number): Promise<Buffer> {
      const batch = await load(batchIds([shipmentId], 1))
      return slips(batch, batchTitle(options.title, batch))
    },

    /** The packing slips of a batch, in the order named, one PDF (each slip numbers its own pages). */
    async packingSlips(ids: readonly number[]): Promise<Buffer> {
      const batch = await load(batchIds(ids, options.maxBatchSize))
      return slips(batch, batchTitle(`${options.title}s`, batch))
    },

    /** The pick list of a batch: SKUs summed, sorted by the lines' location, with the shipments each goes to. */
    async pickList(ids: readonly number[]): Promise<Buffer> {
      const batch = await load(batchIds(ids, options.maxBatchSize))
      const picked: PickedLine[] = []
      for (const loaded of batch) {
        const byId = new Map((loaded.lines ?? []).map((line) => [line.id, line]))
        const slip = slipData(loaded)
        for (const line of slip.groups.flatMap((group) => group.lines)) {
          const orderLine = line.lineItemId === null ? undefined : byId.get(line.lineItemId)
          picked.push({ shipmentReference: loaded.shipment.reference, sku: line.sku, name: line.name, location: orderLine?.location || null, quantity: line.quantity })
        }
      }
      const { DocumentWriter, pickListRows, writePickList } = await loadDocumentEngine()
      const rows = pickListRows(picked)
      return rendering(async () => {
        const writer = new DocumentWriter(await fontStack(), { size: options.pageSize, title: 'Pick list', date: now() })
        const units = rows.reduce((sum, row) => sum + row.quantity, 0)
        await writePickList(writer, rows, {
          shop: options.shop.name,
          title: 'Pick list',
          subtitle: `${batch.length} shipment${batch.length === 1 ? '' : 's'} · ${rows.length} row${rows.length === 1 ? '' : 's'} · ${units} unit${units === 1 ? '' : 's'} · ${dateText(now())}`,
        })
        writer.footers((page, pages) => `Pick list · Page ${page} of ${pages}`)
        return writer.bytes()
      })
    },

    /**
     * The labels of a batch with its packing slips, one PDF to print in one go: per shipment, the label of
     * each labelled parcel (at the label's own page size), then its packing slip.
     */
    async labels(ids: readonly number[]): Promise<Buffer> {
      const batch = await load(batchIds(ids, options.maxBatchSize))
      // The package's slips are written as one document (the fonts read once) and taken page by page.
      const pageCounts: number[] = []
      const written = options.renderPackingSlip ? null : await rendering(() => writeSlips(batch, batchTitle(`${options.title}s`, batch), pageCounts))
      const parts: MergePart[] = []
      let firstPage = 0
      for (const [index, loaded] of batch.entries()) {
        for (const parcel of loaded.parcels) if (parcel.label) parts.push(await labelPart(loaded.shipment.id, parcel))
        if (written) {
          const count = pageCounts[index]!
          parts.push({ kind: 'pdf', bytes: written, pages: Array.from({ length: count }, (_, page) => firstPage + page) })
          firstPage += count
        } else parts.push({ kind: 'pdf', bytes: await hostSlip(loaded) })
      }
      return (await loadDocumentEngine()).mergeParts(parts, { title: batchTitle('Labels and packing slips', batch), date: now() })
    },
  }
}
