// The documents of shipments as PDF bytes: a packing slip, the packing slips of a batch, the batch's
// pick list, and the batch's labels merged with its slips. `app.shipments.documents`.
// Composed of one module per concern over the shared context (service-context.ts): slips.ts (packing
// slips) and label-parts.ts (the labels fetched for the labels document); the batch documents are here.
import type { MergePart } from './merge.js'
import type { PackingSlipData } from './model.js'
import type { PickedLine } from './pick-list.js'
import { createLabelParts } from './label-parts.js'
import { createPackingSlips } from './slips.js'
import { createCommercialInvoices } from './invoices.js'
import type { CustomsDeclarationRow } from '../db/customs.js'
import { DeliveryErrors } from '../errors.js'
import { createPrintJob, type PrintJobOptions, type PrintJobParcel } from './print-job.js'
import { batchIds, createDocumentServiceContext, loadDocumentEngine, type DocumentServiceDependencies, type Loaded } from './service-context.js'

export { batchIds, loadDocumentEngine, type DocumentServiceDependencies } from './service-context.js'
export { MAX_PRINT_JOB_PARCELS, type PrintJobOptions, type PrintJobParcel } from './print-job.js'

export type DocumentService = ReturnType<typeof createDocumentService>

export function createDocumentService(deps: DocumentServiceDependencies) {
  const shared = createDocumentServiceContext(deps)
  const { options, fontStack, dateText, now, load, rendering, batchTitle } = shared
  const { slipData, writeSlips, slips, hostSlip } = createPackingSlips(shared)
  const { labelPart, labelZpl, formPart } = createLabelParts(shared)
  const { invoiceData, writeInvoices, declarationOf } = createCommercialInvoices(shared)

  /** The pick list of a batch already read: SKUs summed, sorted by the lines' location. */
  async function pickListOf(batch: readonly Loaded[]): Promise<Buffer> {
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
  }

  const printJob = createPrintJob(shared, {
    labelPart,
    labelZpl,
    formPart,
    declarationsOf: async (parcelIds) => new Map((await deps.customs.declarationsFor(parcelIds)).map((row): [number, CustomsDeclarationRow] => [row.parcelId, row])),
    invoicesOf: async (entries, pageCounts) => {
      const invoices = await Promise.all(entries.map(({ loaded, parcel, declaration }) => invoiceData(loaded, parcel, declaration)))
      return writeInvoices(invoices, batchTitle('Commercial invoices', entries.map(({ loaded }) => loaded)), pageCounts)
    },
    hostSlip,
    pickListOf,
    writtenSlips: (batch, pageCounts) => (options.renderPackingSlip ? Promise.resolve(null) : rendering(() => writeSlips(batch, batchTitle(`${options.title}s`, batch), pageCounts))),
  })

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

    /**
     * The commercial invoice of an international parcel, a PDF, from its customs declaration: 404 for an
     * unknown or deleted shipment, a parcel not of it, or a parcel without a declaration (coded
     * SHIPMENTS_DOCUMENT_NO_DECLARATION).
     */
    async commercialInvoice(shipmentId: number, parcelId: number): Promise<Buffer> {
      const [loaded] = await load(batchIds([shipmentId], 1))
      const parcel = loaded!.parcels.find((each) => each.id === parcelId)
      if (!parcel) throw new DeliveryErrors.ParcelNotFound(parcelId)
      const invoice = await invoiceData(loaded!, parcel, await declarationOf(parcelId))
      return writeInvoices([invoice], `Commercial invoice ${invoice.invoiceNumber}`)
    },

    /** The pick list of a batch: SKUs summed, sorted by the lines' location, with the shipments each goes to. */
    async pickList(ids: readonly number[]): Promise<Buffer> {
      return pickListOf(await load(batchIds(ids, options.maxBatchSize)))
    },

    /**
     * One print job of parcels in pick order (`{ shipmentId, parcelId }`): a PDF of their labels, each at
     * its own page size, with a pick list first and each shipment's packing slip after its labels when
     * `include` asks; or (`format: 'zpl'`) the labels bought as ZPL in one file. Parcels without a label,
     * and in ZPL labels bought in another format, are refused by name (422) before anything is fetched.
     */
    printJob: (parcels: readonly PrintJobParcel[], jobOptions: PrintJobOptions): Promise<Buffer> => printJob(parcels, jobOptions),

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
