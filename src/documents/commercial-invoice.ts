// The commercial invoice of an international parcel: the seller (ship-from) and the buyer (ship-to), its
// number and date, each line with its tariff number, origin, quantity, unit and total value, the totals,
// the terms (incoterm, reason for export, EEL/PFC), a declaration and a signature line. Written through the
// documents' writer, one invoice from a new page; the table's header repeats on every page.
import type { CommercialInvoiceData } from './model.js'
import { addressLines } from './packing-slip.js'
import { MARGIN, type DocumentWriter } from './writer.js'

/** The sentence above the signature line (the wording customs brokers' templates use). */
export const INVOICE_DECLARATION = 'I declare that the information on this invoice is true and correct, and that the contents and values of this shipment are as stated above.'

/** Writes one invoice from a new page on; the caller writes its footers. */
export function writeCommercialInvoice(writer: DocumentWriter, invoice: CommercialInvoiceData, dateText: (date: Date) => string) {
  const { doc } = writer
  let y = writer.addPage()
  const width = writer.contentWidth
  const half = width / 2 - 10
  const right = MARGIN + width / 2 + 10

  // Header: the title and the invoice's references on the right, the seller (exporter) on the left.
  let top = writer.text('Commercial invoice', right, y, { bold: true, size: 18, width: half })
  for (const line of [
    `Invoice ${invoice.invoiceNumber}`,
    `Date ${dateText(invoice.date)}`,
    `Shipment ${invoice.shipment.reference} · Order ${invoice.order.reference}`,
    ...(invoice.parcel.trackingNumber ? [`${invoice.parcel.carrier ?? 'Tracking'} ${invoice.parcel.trackingNumber}`] : []),
  ])
    top = writer.text(line, right, top + 2, { size: 10, width: half })
  let left = writer.text('Seller (exporter)', MARGIN, y, { bold: true, size: 10, width: half })
  const sellerLines = invoice.seller.address ? addressLines(invoice.seller.address) : []
  if (!sellerLines.includes(invoice.seller.name)) sellerLines.unshift(invoice.seller.name)
  for (const line of sellerLines) left = writer.text(line, MARGIN, left, { size: 10, width: half })
  y = Math.max(left, top) + 14

  y = writer.text('Buyer (consignee)', MARGIN, y, { bold: true, size: 10, width: half })
  for (const line of invoice.buyer ? addressLines(invoice.buyer) : ['(no shipping address on the order)']) y = writer.text(line, MARGIN, y, { size: 10, width: half })
  y += 14

  // The table: Description | HS code | Origin | Qty | Unit value | Total value.
  const columns = [
    { title: 'Description', width: width - 360, align: 'left' as const },
    { title: 'HS code', width: 80, align: 'left' as const },
    { title: 'Origin', width: 44, align: 'left' as const },
    { title: 'Qty', width: 40, align: 'right' as const },
    { title: `Unit (${invoice.currency})`, width: 96, align: 'right' as const },
    { title: `Total (${invoice.currency})`, width: 100, align: 'right' as const },
  ]
  const xs = columns.reduce<number[]>((at, column, index) => [...at, index === 0 ? MARGIN + 4 : at[index - 1]! + columns[index - 1]!.width], [])
  const cell = (text: string, index: number, at: number, bold = false) => writer.text(text, xs[index]!, at, { bold, size: 9, width: columns[index]!.width - 6, align: columns[index]!.align })
  const header = (at: number) => {
    doc.rect(MARGIN, at, width, 18).fill('#e8e8e8')
    columns.forEach((column, index) => cell(column.title, index, at + 4, true))
    return at + 22
  }
  y = header(y)
  for (const line of invoice.lines) {
    const description = line.sku ? `${line.description}\nSKU ${line.sku} · ${line.weight.value} ${line.weight.unit}` : `${line.description}\n${line.weight.value} ${line.weight.unit}`
    const rowHeight = writer.heightOf(description, { size: 9, width: columns[0]!.width - 6 }) + 6
    if (y + rowHeight > writer.bottom) y = header(writer.addPage())
    const values = [description, line.tariffNumber ?? '—', line.originCountry ?? '—', String(line.quantity), line.unitValue, line.totalValue]
    values.forEach((value, index) => cell(value, index, y + 2))
    y += rowHeight
    doc.moveTo(MARGIN, y).lineTo(MARGIN + width, y).lineWidth(0.5).strokeColor('#cccccc').stroke()
  }

  // The totals and terms, then the declaration and the signature line: kept together on one page.
  const terms: Array<[string, string]> = [
    ['Total value', `${invoice.totalValue} ${invoice.currency}`],
    ['Total weight', `${invoice.totalWeight.value} ${invoice.totalWeight.unit}`],
    ['Currency', invoice.currency],
    ['Incoterm', invoice.incoterm],
    ['Reason for export', invoice.reasonForExport],
    ['EEL/PFC', invoice.eelPfc ?? '—'],
  ]
  const closing = terms.length * 14 + writer.heightOf(INVOICE_DECLARATION, { size: 9, width }) + 90
  if (y + 10 + closing > writer.bottom) y = writer.addPage()
  else y += 10
  for (const [label, value] of terms) {
    writer.text(label, MARGIN + width - 300, y, { bold: true, size: 10, width: 140 })
    y = writer.text(value, MARGIN + width - 160, y, { size: 10, width: 156, align: 'right' }) + 2
  }
  y = writer.text(INVOICE_DECLARATION, MARGIN, y + 16, { size: 9, width })
  y += 34
  doc.moveTo(MARGIN, y).lineTo(MARGIN + 240, y).lineWidth(0.75).strokeColor('#000000').stroke()
  doc.moveTo(MARGIN + 280, y).lineTo(MARGIN + width, y).lineWidth(0.75).strokeColor('#000000').stroke()
  writer.text(`Signature: ${invoice.signer ?? ''}`.trim(), MARGIN, y + 4, { size: 9, width: 240 })
  writer.text(`Date: ${dateText(invoice.date)}`, MARGIN + 280, y + 4, { size: 9, width: width - 280 })
}
