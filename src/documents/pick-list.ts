// The pick list of a batch: every SKU summed over the batch's shipments, with the shipments it goes
// to, in the order of the shelves (the lines' `location`), each row with a box to tick.
import type { PickListRow } from './model.js'
import { MARGIN, yieldToEventLoop, type DocumentWriter } from './writer.js'

/** One line of one shipment of the batch, as the pick list adds it up. */
export interface PickedLine {
  shipmentReference: string
  sku: string | null
  name: string
  location: string | null
  quantity: number
}

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' })

/**
 * The rows: lines with the same SKU are one row (lines without an SKU, by name); sorted by location
 * (rows without one last), then SKU or name, in natural order (A2 before A10).
 */
export function pickListRows(lines: readonly PickedLine[]): PickListRow[] {
  const rows = new Map<string, PickListRow>()
  for (const line of lines) {
    const key = line.sku !== null && line.sku !== '' ? `sku:${line.sku}` : `name:${line.name}`
    const row = rows.get(key)
    if (!row) {
      rows.set(key, { sku: line.sku || null, name: line.name, location: line.location, quantity: line.quantity, shipments: [line.shipmentReference] })
      continue
    }
    row.quantity += line.quantity
    row.location ??= line.location
    if (!row.shipments.includes(line.shipmentReference)) row.shipments.push(line.shipmentReference)
  }
  return [...rows.values()].sort((a, b) => {
    if (a.location !== b.location) {
      if (a.location === null) return 1
      if (b.location === null) return -1
      const byLocation = collator.compare(a.location, b.location)
      if (byLocation !== 0) return byLocation
    }
    return collator.compare(a.sku ?? a.name, b.sku ?? b.name)
  })
}

/**
 * The references as lines of `width`, as many to a line as fit: pdfkit breaks a line after a hyphen,
 * which cut "SO-1003-s001" into "SO-1003-" and "s001". Only a reference wider than the column on its
 * own is broken (where pdfkit must).
 */
function referenceLines(writer: DocumentWriter, references: readonly string[], options: { size: number; width: number }): string {
  const lines: string[] = []
  for (const [index, reference] of references.entries()) {
    const item = index < references.length - 1 ? `${reference},` : reference
    const line = lines.at(-1)
    if (line !== undefined && writer.widthOf(`${line} ${item}`, options) <= options.width) lines[lines.length - 1] = `${line} ${item}`
    else lines.push(item)
  }
  return lines.join('\n')
}

/** Writes the pick list (the caller writes the footers), yielding to the event loop after each page. */
export async function writePickList(writer: DocumentWriter, rows: readonly PickListRow[], heading: { shop: string; title: string; subtitle: string }) {
  const { doc } = writer
  let y = writer.addPage()
  const width = writer.contentWidth
  y = writer.text(heading.shop, MARGIN, y, { bold: true, size: 12 })
  y = writer.text(heading.title, MARGIN, y + 2, { bold: true, size: 18 })
  y = writer.text(heading.subtitle, MARGIN, y + 2, { size: 9, color: '#555555' }) + 12

  const box = 12
  const columns = { check: MARGIN + 4, location: MARGIN + 24, sku: MARGIN + 94, name: MARGIN + 194, quantity: MARGIN + width - 150, shipments: MARGIN + width - 110 }
  const widths = { location: 66, sku: 96, name: columns.quantity - columns.name - 6, quantity: 34, shipments: 110 }
  const header = (at: number) => {
    doc.rect(MARGIN, at, width, 18).fill('#e8e8e8')
    writer.text('Location', columns.location, at + 4, { bold: true, size: 9, width: widths.location })
    writer.text('SKU', columns.sku, at + 4, { bold: true, size: 9, width: widths.sku })
    writer.text('Item', columns.name, at + 4, { bold: true, size: 9, width: widths.name })
    writer.text('Qty', columns.quantity, at + 4, { bold: true, size: 9, width: widths.quantity, align: 'right' })
    writer.text('Shipments', columns.shipments + 6, at + 4, { bold: true, size: 9, width: widths.shipments - 6 })
    return at + 22
  }
  y = header(y)
  for (const row of rows) {
    const shipments = referenceLines(writer, row.shipments, { size: 8, width: widths.shipments - 6 })
    const height =
      Math.max(
        writer.heightOf(row.name, { size: 10, width: widths.name }),
        writer.heightOf(row.sku ?? '—', { size: 9, width: widths.sku }),
        writer.heightOf(row.location ?? '—', { size: 9, width: widths.location }),
        writer.heightOf(shipments, { size: 8, width: widths.shipments - 6 }),
        box,
      ) + 8
    if (y + height > writer.bottom) {
      await yieldToEventLoop()
      y = header(writer.addPage())
    }
    doc.rect(columns.check, y + 3, box, box).lineWidth(1).strokeColor('#000000').stroke()
    writer.text(row.location ?? '—', columns.location, y + 4, { size: 9, width: widths.location })
    writer.text(row.sku ?? '—', columns.sku, y + 4, { size: 9, width: widths.sku })
    writer.text(row.name, columns.name, y + 3, { size: 10, width: widths.name })
    writer.text(String(row.quantity), columns.quantity, y + 3, { bold: true, size: 11, width: widths.quantity, align: 'right' })
    writer.text(shipments, columns.shipments + 6, y + 4, { size: 8, width: widths.shipments - 6 })
    y += height
    doc.moveTo(MARGIN, y).lineTo(MARGIN + width, y).lineWidth(0.5).strokeColor('#cccccc').stroke()
  }
  if (rows.length === 0) writer.text('The shipments of this batch hold no lines.', MARGIN, y + 4, { size: 10 })
}
