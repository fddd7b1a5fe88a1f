// The packing slip: the shop, the order and shipment with the shipment's reference as a Code 128
// barcode (bwip-js), the ship-to address, the lines per parcel, the notes; the table's header repeats
// on every page.
import addressFormatter from '@fragaria/address-formatter'
import bwipjs from 'bwip-js'
import type { PostalAddress } from '../order-store.js'
import type { PackingSlipData, PackingSlipLine, PackingSlipShow } from './model.js'
import { MARGIN, type DocumentWriter } from './writer.js'

/** Code 128 encodes ASCII: a reference with other characters is shown as text only. */
const CODE_128_TEXT = /^[\x20-\x7e]{1,80}$/

/**
 * The shipment reference as Code 128 (bwip-js encodes it): the widths of its bars and spaces in
 * modules, a bar first, or null when Code 128 cannot carry the reference. The slip draws the bars as
 * vector rectangles: sharp at any printer's resolution, and a fraction of the cost of rendering a PNG
 * per slip and embedding it (which was most of a batch's time).
 */
export function referenceBarcode(reference: string): number[] | null {
  if (!CODE_128_TEXT.test(reference)) return null
  const [symbol] = bwipjs.raw({ bcid: 'code128', text: reference })
  return symbol && 'sbs' in symbol ? symbol.sbs : null
}

/** Draws the bars of `widths` (see referenceBarcode) at most `maxWidth` wide, one module at most 1.2 pt. */
function drawBarcode(doc: DocumentWriter['doc'], widths: readonly number[], x: number, y: number, maxWidth: number, height: number) {
  const modules = widths.reduce((sum, width) => sum + width, 0)
  const module = Math.min(1.2, maxWidth / modules)
  let at = x
  widths.forEach((width, index) => {
    if (index % 2 === 0) doc.rect(at, y, width * module, height)
    at += width * module
  })
  doc.fillColor('#000000').fill()
}

/**
 * The address as the destination country writes it (OpenCage's templates, through
 * @fragaria/address-formatter): "San Francisco, CA 94107" in the US, "10115 Berlin" in Germany, the
 * country's name where its convention puts it. The name and company come first, a second street line
 * under the first, the phone last. A country code the templates do not know keeps its code as the last
 * line (the country is never dropped).
 */
export function addressLines(address: PostalAddress): string[] {
  const postal = { road: address.street1, city: address.city, postcode: address.postalCode, state: address.state ?? undefined, countryCode: address.country }
  const lines = addressFormatter.format(postal, { output: 'array', appendCountry: true })
  if (lines.length === addressFormatter.format(postal, { output: 'array' }).length) lines.push(address.country)
  if (address.street2) {
    const street = lines.indexOf(address.street1)
    lines.splice(street === -1 ? 1 : street + 1, 0, address.street2)
  }
  return [address.name, address.company, ...lines, address.phone].filter((line): line is string => typeof line === 'string' && line.trim() !== '')
}

const quantityText = (line: PackingSlipLine, show: PackingSlipShow) =>
  show.orderedQuantity && line.ordered !== null && line.ordered !== line.quantity ? `${line.quantity} of ${line.ordered}` : String(line.quantity)

export interface SlipAssets {
  /** The bars of the reference's Code 128 (see referenceBarcode). */
  barcode: number[] | null
  /** The shop's logo, opened once per document (pdfkit embeds an opened image once). */
  logo: unknown
  dateText: (date: Date) => string
}

/** Writes one slip from a new page on; the caller writes its footers. */
export function writePackingSlip(writer: DocumentWriter, slip: PackingSlipData, show: PackingSlipShow, assets: SlipAssets, title: string) {
  const { doc } = writer
  let y = writer.addPage()
  const width = writer.contentWidth

  // Header: the shop on the left (logo above its name), the title and references on the right.
  const half = width / 2 - 10
  let left = y
  if (show.logo && assets.logo) {
    doc.image(assets.logo as never, MARGIN, left, { fit: [150, 50] })
    left += 56
  }
  left = writer.text(slip.shop.name, MARGIN, left, { bold: true, size: 14, width: half })
  if (show.shopAddress) for (const line of slip.shop.address) left = writer.text(line, MARGIN, left, { size: 9, width: half })

  const right = MARGIN + width / 2 + 10
  let top = writer.text(title, right, y, { bold: true, size: 18, width: half })
  top = writer.text(`Order ${slip.order.reference}`, right, top + 4, { size: 10, width: half })
  if (show.orderDate && slip.order.dateOrdered) top = writer.text(`Ordered ${assets.dateText(slip.order.dateOrdered)}`, right, top, { size: 10, width: half })
  top = writer.text(`Shipment ${slip.shipment.reference}`, right, top, { bold: true, size: 10, width: half })
  if (show.barcode && assets.barcode) {
    drawBarcode(doc, assets.barcode, right, top + 4, half, 36)
    top += 44
  }
  if (slip.partOfSeveral) top = writer.text('This order ships in more than one package.', right, top + 2, { size: 8, width: half, color: '#555555' })
  y = Math.max(left, top) + 16

  if (show.shipTo) {
    y = writer.text('Ship to', MARGIN, y, { bold: true, size: 10 })
    const lines = slip.shipTo ? addressLines(slip.shipTo) : ['(no shipping address on the order)']
    for (const line of lines) y = writer.text(line, MARGIN, y, { size: 10, width: half })
    y += 14
  }

  // The table: SKU | Item | Qty, header repeated on every page, a group title per parcel.
  const skuWidth = show.sku ? 120 : 0
  const quantityWidth = 70
  const nameWidth = width - skuWidth - quantityWidth - 16
  const columns = { sku: MARGIN + 4, name: MARGIN + 4 + skuWidth + (show.sku ? 4 : 0), quantity: MARGIN + width - quantityWidth - 4 }
  const header = (at: number) => {
    doc.rect(MARGIN, at, width, 18).fill('#e8e8e8')
    if (show.sku) writer.text('SKU', columns.sku, at + 4, { bold: true, size: 9, width: skuWidth - 4 })
    writer.text('Item', columns.name, at + 4, { bold: true, size: 9, width: nameWidth })
    writer.text('Qty', columns.quantity, at + 4, { bold: true, size: 9, width: quantityWidth, align: 'right' })
    return at + 22
  }
  let groupTitle: string | null = null
  const newPage = () => {
    let at = header(writer.addPage())
    if (groupTitle) at = writer.text(`${groupTitle} (continued)`, MARGIN + 4, at, { bold: true, size: 9 }) + 2
    return at
  }
  y = header(y)
  const groups = show.parcels ? slip.groups : [{ title: null, parcel: null, lines: mergeLines(slip.groups.flatMap((group) => group.lines)) }]
  for (const group of groups) {
    groupTitle = group.title
    if (group.title) {
      const parcel = group.parcel
      const detail = parcel ? [`${parcel.weight} ${parcel.weightUnit}`, parcel.carrier, parcel.trackingNumber].filter(Boolean).join(' · ') : ''
      const text = detail ? `${group.title} — ${detail}` : group.title
      if (y + writer.heightOf(text, { bold: true, size: 9, width }) + 20 > writer.bottom) y = header(writer.addPage())
      y = writer.text(text, MARGIN + 4, y + 4, { bold: true, size: 9, width: width - 8 }) + 2
    }
    if (group.lines.length === 0) y = writer.text('(nothing)', columns.name, y, { size: 9, color: '#555555' }) + 2
    for (const line of group.lines) {
      const rowHeight = Math.max(writer.heightOf(line.name, { size: 10, width: nameWidth }), show.sku ? writer.heightOf(line.sku ?? '', { size: 9, width: skuWidth - 4 }) : 0) + 6
      if (y + rowHeight > writer.bottom) y = newPage()
      if (show.sku) writer.text(line.sku ?? '—', columns.sku, y + 2, { size: 9, width: skuWidth - 4 })
      writer.text(line.name, columns.name, y + 2, { size: 10, width: nameWidth })
      writer.text(quantityText(line, show), columns.quantity, y + 2, { size: 10, width: quantityWidth, align: 'right' })
      y += rowHeight
      doc.moveTo(MARGIN, y).lineTo(MARGIN + width, y).lineWidth(0.5).strokeColor('#cccccc').stroke()
    }
  }
  groupTitle = null

  if (show.notes && slip.notes.length > 0) {
    y += 14
    for (const [index, note] of slip.notes.entries()) {
      const height = writer.heightOf(note, { size: 10, width }) + (index === 0 ? 16 : 4)
      if (y + height > writer.bottom) y = writer.addPage()
      if (index === 0) y = writer.text('Notes', MARGIN, y, { bold: true, size: 10 })
      y = writer.text(note, MARGIN, y, { size: 10, width }) + 4
    }
  }
}

/** The lines of every parcel as one list: quantities of the same order line added up. */
function mergeLines(lines: PackingSlipLine[]): PackingSlipLine[] {
  const merged = new Map<string, PackingSlipLine>()
  for (const line of lines) {
    const key = line.lineItemId === null ? `name:${line.sku}:${line.name}` : `line:${line.lineItemId}`
    const known = merged.get(key)
    merged.set(key, known ? { ...known, quantity: known.quantity + line.quantity } : { ...line })
  }
  return [...merged.values()]
}
