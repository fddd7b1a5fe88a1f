// Packing slips: what a slip shows (its lines grouped by parcel), the package's own layout written one slip
// after another, or the host's renderer's PDFs.
import { DocumentErrors } from '../errors.js'
import type { MergePart } from './merge.js'
import type { PackingSlipData, PackingSlipGroup, PackingSlipLine } from './model.js'
import { loadDocumentEngine, yieldToEventLoop, type DocumentServiceContext, type Loaded } from './service-context.js'

export function createPackingSlips(shared: DocumentServiceContext) {
  const { deps, options, fontStack, dateText, now, rendering } = shared
  const { logger } = deps

  function slipData({ shipment, order, lines, parcels, partOfSeveral, shipTo }: Loaded): PackingSlipData {
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
      shipTo,
      groups,
      notes: [shipment.shippingNotes, order?.customerNotes].filter((note): note is string => typeof note === 'string' && note.trim() !== ''),
      partOfSeveral,
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

  return { slipData, writeSlips, slips, hostSlip }
}
