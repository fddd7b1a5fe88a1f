// One print job for a packing table: the labels of parcels in pick order as one PDF (each label at its own
// page size; a pick list first and each shipment's packing slip after its labels, as asked), or the labels
// bought as ZPL concatenated into one file for a thermal printer. Everything that can be refused (a parcel
// without a label, a label that is not ZPL) is refused, naming the parcels, before a label is fetched.
// An international parcel (one with a customs declaration) has, after its label, the forms the provider
// returned with it and the package's commercial invoice; a ZPL file holds labels only, so it leaves them
// out and says so (`notPrinted`).
import type { CustomsDeclarationRow, CustomsFormRow } from '../db/customs.js'
import { ShipmentValidationError } from '../errors.js'
import type { Parcel } from '../model/parcel.js'
import type { MergePart } from './merge.js'
import { loadDocumentEngine, type DocumentServiceContext, type Loaded } from './service-context.js'

/** A parcel of a print job, by its shipment: the pair a batch or a pack station knows. */
export interface PrintJobParcel {
  shipmentId: number
  parcelId: number
}

export interface PrintJobOptions {
  /** What goes with the labels (PDF only): a pick list first, each shipment's packing slip after its labels. */
  include?: { slips?: boolean | undefined; pickList?: boolean | undefined } | undefined
  /** pdf: every label, whatever its format, as pages of one PDF; zpl: the labels bought as ZPL, one file. */
  format: 'pdf' | 'zpl'
  /**
   * Filled with what the job left out, in words (a ZPL file cannot hold an international parcel's PDF
   * forms and invoice): the routes answer it in the `x-shipments-not-printed` header.
   */
  notPrinted?: string[] | undefined
}

/** The most parcels one print job takes: a batch of 200 shipments of up to five parcels. */
export const MAX_PRINT_JOB_PARCELS = 1000
/** Labels fetched at once: a file store answers in parallel, and 200 labels one by one would take minutes. */
const FETCH_CONCURRENCY = 4

interface PrintJobConcerns {
  labelPart(shipmentId: number, parcel: Parcel): Promise<MergePart>
  labelZpl(shipmentId: number, parcel: Parcel): Promise<Uint8Array>
  /** The package's slips of the batch in one PDF, the pages of each counted into `pageCounts`; null with a host renderer. */
  writtenSlips(batch: readonly Loaded[], pageCounts: number[]): Promise<Buffer | null>
  hostSlip(loaded: Loaded): Promise<Uint8Array>
  pickListOf(batch: readonly Loaded[]): Promise<Buffer>
  /** The customs declarations of the parcels named that have one (international parcels), by parcel id. */
  declarationsOf(parcelIds: readonly number[]): Promise<Map<number, CustomsDeclarationRow>>
  /** A form the provider returned with a label, fetched under the labels' outbound rules, as a part. */
  formPart(shipmentId: number, parcelId: number, form: CustomsFormRow): Promise<MergePart>
  /** The commercial invoices of the parcels in one PDF, the pages of each counted into `pageCounts`. */
  invoicesOf(entries: ReadonlyArray<{ loaded: Loaded; parcel: Parcel; declaration: CustomsDeclarationRow }>, pageCounts: number[]): Promise<Buffer>
}

const isId = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 1 && value <= 2_147_483_647

/** The parcels as named: each a pair of ids, at most MAX_PRINT_JOB_PARCELS, a repeat dropped; the format and what it may include. */
function checkedRequest(parcels: readonly PrintJobParcel[], options: PrintJobOptions, maxShipments: number): PrintJobParcel[] {
  const errors: Record<string, string[]> = {}
  if (!Array.isArray(parcels) || parcels.length === 0) errors.parcels = ['Name at least one parcel.']
  else if (parcels.length > MAX_PRINT_JOB_PARCELS) errors.parcels = [`A print job holds at most ${MAX_PRINT_JOB_PARCELS} parcels; ${parcels.length} were named.`]
  else {
    const bad = parcels.findIndex((each) => !(each && typeof each === 'object' && isId(each.shipmentId) && isId(each.parcelId)))
    if (bad >= 0) errors.parcels = [`Item ${bad + 1} is not a parcel: name its shipmentId and parcelId (positive integers).`]
    else if (new Set(parcels.map((each) => each.shipmentId)).size > maxShipments) errors.parcels = [`A print job holds the parcels of at most ${maxShipments} shipments.`]
  }
  if (options?.format !== 'pdf' && options?.format !== 'zpl') errors.format = ['Choose pdf or zpl.']
  else if (options.format === 'zpl' && (options.include?.slips || options.include?.pickList)) errors.include = ['A ZPL file holds labels only: packing slips and the pick list come as PDF.']
  if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
  const seen = new Set<number>()
  return parcels.filter((each) => !seen.has(each.parcelId) && seen.add(each.parcelId))
}

/** Runs `work` over the items, a few at a time, answering in the items' order. */
async function inOrder<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await work(items[index]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(FETCH_CONCURRENCY, items.length) }, worker))
  return results
}

export function createPrintJob(shared: DocumentServiceContext, concerns: PrintJobConcerns) {
  const { options, load, now, batchTitle } = shared

  /** Each named parcel with its shipment, or the 422 naming those without a label (and, for ZPL, those not bought as ZPL). */
  function resolveParcels(named: readonly PrintJobParcel[], batch: readonly Loaded[], format: 'pdf' | 'zpl') {
    const byShipment = new Map(batch.map((loaded) => [loaded.shipment.id, loaded]))
    const resolved: Array<{ loaded: Loaded; parcel: Parcel }> = []
    const unknown: string[] = []
    const unlabelled: string[] = []
    const notZpl: string[] = []
    for (const { shipmentId, parcelId } of named) {
      const loaded = byShipment.get(shipmentId)!
      const parcel = loaded.parcels.find((each) => each.id === parcelId)
      if (!parcel) unknown.push(`Parcel ${parcelId} is not a parcel of shipment ${loaded.shipment.reference}.`)
      else if (!parcel.label) unlabelled.push(`Parcel ${parcelId} of shipment ${loaded.shipment.reference} has no label.`)
      else if (format === 'zpl' && parcel.label.format.toUpperCase() !== 'ZPL') notZpl.push(`The label of parcel ${parcelId} of shipment ${loaded.shipment.reference} was bought as ${parcel.label.format}, not ZPL.`)
      else resolved.push({ loaded, parcel })
    }
    const problems = [...unknown, ...unlabelled, ...notZpl]
    if (problems.length > 0) throw new ShipmentValidationError({ parcels: problems })
    return resolved
  }

  /** The PDF: the pick list, then per parcel its label, each shipment's slip after its last label in the job. */
  async function pdfJob(resolved: ReadonlyArray<{ loaded: Loaded; parcel: Parcel }>, batch: readonly Loaded[], include: PrintJobOptions['include']) {
    const parts: MergePart[] = []
    if (include?.pickList) parts.push({ kind: 'pdf', bytes: await concerns.pickListOf(batch) })
    const labels = await inOrder(resolved, ({ loaded, parcel }) => concerns.labelPart(loaded.shipment.id, parcel))
    const lastLabelOf = new Map(resolved.map(({ loaded }, index) => [loaded.shipment.id, index]))
    const slipParts = new Map<number, MergePart>()
    if (include?.slips) {
      const pageCounts: number[] = []
      const written = await concerns.writtenSlips(batch, pageCounts)
      let firstPage = 0
      for (const [index, loaded] of batch.entries()) {
        if (written) {
          const count = pageCounts[index]!
          slipParts.set(loaded.shipment.id, { kind: 'pdf', bytes: written, pages: Array.from({ length: count }, (_, page) => firstPage + page) })
          firstPage += count
        } else slipParts.set(loaded.shipment.id, { kind: 'pdf', bytes: await concerns.hostSlip(loaded) })
      }
    }
    const customs = await customsParts(resolved)
    for (const [index, label] of labels.entries()) {
      parts.push(label, ...(customs.get(resolved[index]!.parcel.id) ?? []))
      const shipmentId = resolved[index]!.loaded.shipment.id
      const slip = slipParts.get(shipmentId)
      if (slip && lastLabelOf.get(shipmentId) === index) parts.push(slip)
    }
    return (await loadDocumentEngine()).mergeParts(parts, { title: batchTitle('Print job', batch), date: now() })
  }

  /** Each international parcel's forms (fetched a few at a time) and commercial invoice (one document, taken page by page), by parcel id. */
  async function customsParts(resolved: ReadonlyArray<{ loaded: Loaded; parcel: Parcel }>): Promise<Map<number, MergePart[]>> {
    const declarations = await concerns.declarationsOf(resolved.map(({ parcel }) => parcel.id))
    const international = resolved.flatMap((entry) => {
      const declaration = declarations.get(entry.parcel.id)
      return declaration ? [{ ...entry, declaration }] : []
    })
    const byParcel = new Map<number, MergePart[]>()
    if (international.length === 0) return byParcel
    const forms = international.flatMap((entry) => entry.declaration.forms.map((form) => ({ entry, form })))
    const fetched = await inOrder(forms, ({ entry, form }) => concerns.formPart(entry.loaded.shipment.id, entry.parcel.id, form))
    for (const [index, { entry }] of forms.entries()) byParcel.set(entry.parcel.id, [...(byParcel.get(entry.parcel.id) ?? []), fetched[index]!])
    const pageCounts: number[] = []
    const invoices = await concerns.invoicesOf(international, pageCounts)
    let firstPage = 0
    for (const [index, { parcel }] of international.entries()) {
      const count = pageCounts[index]!
      byParcel.set(parcel.id, [...(byParcel.get(parcel.id) ?? []), { kind: 'pdf', bytes: invoices, pages: Array.from({ length: count }, (_, page) => firstPage + page) }])
      firstPage += count
    }
    return byParcel
  }

  /** What a ZPL job leaves out: each international parcel's forms and invoice, which come as PDF. */
  async function leftOutOfZpl(resolved: ReadonlyArray<{ loaded: Loaded; parcel: Parcel }>, notPrinted: string[] | undefined): Promise<void> {
    const declarations = await concerns.declarationsOf(resolved.map(({ parcel }) => parcel.id))
    for (const { loaded, parcel } of resolved) {
      const declaration = declarations.get(parcel.id)
      if (!declaration) continue
      const documents = [...declaration.forms.map((form) => form.type), 'commercial invoice'].join(', ')
      notPrinted?.push(`parcel ${parcel.id} of shipment ${loaded.shipment.reference}: ${documents} (PDF only)`)
    }
  }

  /**
   * The print job of parcels in pick order: one PDF, or one ZPL file. 422 (nothing fetched) for a parcel
   * without a label, one not of the shipment named, or in ZPL a label bought in another format; 404 for
   * an unknown or deleted shipment; 502 naming the parcel whose label cannot be fetched.
   */
  return async function printJob(parcels: readonly PrintJobParcel[], jobOptions: PrintJobOptions): Promise<Buffer> {
    const named = checkedRequest(parcels, jobOptions, options.maxBatchSize)
    const batch = await load([...new Set(named.map((each) => each.shipmentId))])
    const resolved = resolveParcels(named, batch, jobOptions.format)
    if (jobOptions.format === 'pdf') return pdfJob(resolved, batch, jobOptions.include)
    const labels = await inOrder(resolved, ({ loaded, parcel }) => concerns.labelZpl(loaded.shipment.id, parcel))
    await leftOutOfZpl(resolved, jobOptions.notPrinted)
    // Each label is one ^XA...^XZ format (or several); a line break between them keeps printers and readers apart.
    const newline = Buffer.from('\n')
    return Buffer.concat(labels.flatMap((bytes) => (bytes[bytes.length - 1] === 0x0a ? [bytes] : [bytes, newline])))
  }
}
