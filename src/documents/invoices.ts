// Commercial invoices: a parcel's customs declaration (data.customs) with its seller (the ship-from address)
// and its buyer (the order's ship-to) as the invoice's data, written by commercial-invoice.ts. Values are
// exact decimals: sums are exact, a unit value is rounded up (never down), weights are added in their
// unit (or in ounces, each rounded up, when the lines mix units).
import type { CustomsDeclarationRow } from '../db/customs.js'
import { DocumentErrors } from '../errors.js'
import type { Parcel } from '../model/parcel.js'
import { toOunces, WEIGHT_UNITS, type WeightUnit } from '../model/units.js'
import type { CommercialInvoiceData } from './model.js'
import { loadDocumentEngine, type DocumentServiceContext, type Loaded } from './service-context.js'

/** Why the goods cross the border, as the invoice says it, from the declaration's contents type. */
const REASONS: Record<string, string> = { merchandise: 'Sale', gift: 'Gift', sample: 'Sample', returned_goods: 'Return', documents: 'Documents' }

export function reasonForExport(declaration: Pick<CustomsDeclarationRow, 'contentsType' | 'contentsExplanation'>): string {
  return REASONS[declaration.contentsType] ?? (declaration.contentsExplanation?.trim() || 'Other')
}

/** A plain decimal as an integer and its places ("12.50" -> 1250n, 2). */
function parts(value: string): { units: bigint; places: number } {
  const [whole = '0', fraction = ''] = value.trim().split('.')
  return { units: BigInt(`${whole}${fraction}`), places: fraction.length }
}

/** An integer at `places` places as a plain decimal (1250n, 2 -> "12.50"). */
function text(units: bigint, places: number): string {
  if (places === 0) return units.toString()
  const digits = units.toString().padStart(places + 1, '0')
  return `${digits.slice(0, -places)}.${digits.slice(-places)}`
}

/** The exact sum of decimals, at the most places any of them has (at least `minPlaces`). */
export function sumDecimals(values: readonly string[], minPlaces = 0): string {
  const places = Math.max(minPlaces, ...values.map((value) => parts(value).places))
  const total = values.reduce((sum, value) => {
    const { units, places: own } = parts(value)
    return sum + units * 10n ** BigInt(places - own)
  }, 0n)
  return text(total, places)
}

/** `total / quantity` at the total's places (at least two), rounded up: a unit value is never shown below the true one. */
export function unitValue(total: string, quantity: number): string {
  const { units, places: own } = parts(total)
  const places = Math.max(2, own)
  const scaled = units * 10n ** BigInt(places - own)
  const count = BigInt(Math.max(1, quantity))
  return text((scaled + count - 1n) / count, places)
}

/** The declaration's total weight: in the lines' unit when they share one, else in ounces (each line rounded up). */
export function totalWeight(items: CustomsDeclarationRow['items']): { value: string; unit: string } {
  const units = new Set(items.map((item) => item.weight.unit))
  if (units.size === 1) return { value: sumDecimals(items.map((item) => item.weight.value)), unit: items[0]!.weight.unit }
  if (units.size === 0) return { value: '0', unit: 'oz' }
  const ounces = items.map((item) => ((WEIGHT_UNITS as readonly string[]).includes(item.weight.unit) ? toOunces(item.weight.value, item.weight.unit as WeightUnit) : item.weight.value))
  return { value: sumDecimals(ounces), unit: 'oz' }
}

export function createCommercialInvoices(shared: DocumentServiceContext) {
  const { deps, options, fontStack, dateText, now, rendering } = shared

  /** The invoice of one parcel of a loaded shipment, from its declaration. */
  async function invoiceData(loaded: Loaded, parcel: Parcel, declaration: CustomsDeclarationRow): Promise<CommercialInvoiceData> {
    const { address } = await deps.deliveries.shipFrom()
    const { shipment, order } = loaded
    return {
      invoiceNumber: `INV-${shipment.reference}-${parcel.id}`,
      date: declaration.updatedAt,
      seller: { name: address?.company || options.shop.name || address?.name || '', address },
      buyer: loaded.shipTo,
      shipment: { id: shipment.id, reference: shipment.reference },
      order: { id: shipment.orderId, reference: order?.reference ?? String(shipment.orderId) },
      parcel: { id: parcel.id, carrier: parcel.carrier, trackingNumber: parcel.trackingNumber },
      currency: declaration.currency,
      lines: declaration.items.map((item) => ({
        description: item.description,
        sku: item.sku,
        tariffNumber: item.tariffNumber,
        originCountry: item.originCountry,
        quantity: item.quantity,
        unitValue: unitValue(item.value, item.quantity),
        totalValue: sumDecimals([item.value], 2),
        weight: { value: item.weight.value, unit: item.weight.unit },
      })),
      totalValue: sumDecimals(
        declaration.items.map((item) => item.value),
        2,
      ),
      totalWeight: totalWeight(declaration.items),
      incoterm: declaration.incoterm,
      reasonForExport: reasonForExport(declaration),
      eelPfc: declaration.eelPfc,
      signer: declaration.signer,
    }
  }

  /** The invoices in one PDF, each from a new page with its own footers; the page count of each pushed into `pageCounts`. */
  async function writeInvoices(invoices: readonly CommercialInvoiceData[], title: string, pageCounts: number[] = []): Promise<Buffer> {
    const { DocumentWriter, writeCommercialInvoice } = await loadDocumentEngine()
    return rendering(async () => {
      const writer = new DocumentWriter(await fontStack(), { size: options.pageSize, title, date: now() })
      for (const invoice of invoices) {
        writeCommercialInvoice(writer, invoice, dateText)
        pageCounts.push(writer.footers((page, pages) => `Commercial invoice ${invoice.invoiceNumber} · Page ${page} of ${pages}`))
      }
      return writer.bytes()
    })
  }

  /** The declaration of a parcel, or the coded 404 saying it has none. */
  async function declarationOf(parcelId: number): Promise<CustomsDeclarationRow> {
    const declaration = await deps.customs.declaration(parcelId)
    if (!declaration) throw new DocumentErrors.NoDeclaration(parcelId)
    return declaration
  }

  return { invoiceData, writeInvoices, declarationOf }
}
