// Merging: label documents and packing slips into one PDF with @cantoo/pdf-lib (the maintained fork of
// pdf-lib), each page at its own size. A label image (PNG, JPEG) becomes a page of the label's width.
import { PDFDocument } from '@cantoo/pdf-lib'
import { yieldToEventLoop } from './writer.js'

/** A part of a merged document: a whole PDF, or a label image. */
export type MergePart = { kind: 'pdf'; bytes: Uint8Array; pages?: readonly number[] } | { kind: 'png' | 'jpeg'; bytes: Uint8Array; widthInches: number }

/** What is in the bytes, by their signature; null for anything else (ZPL, EPL2, HTML...). */
export function partKind(bytes: Uint8Array): 'pdf' | 'png' | 'jpeg' | null {
  const ascii = Buffer.from(bytes.subarray(0, 1024)).toString('latin1')
  if (ascii.includes('%PDF-')) return 'pdf'
  if (bytes[0] === 0x89 && ascii.startsWith('\x89PNG')) return 'png'
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'jpeg'
  return null
}

/** One PDF of the parts in order; `date` stamps it (the same parts give the same bytes). */
export async function mergeParts(parts: readonly MergePart[], options: { title: string; date: Date }): Promise<Buffer> {
  const merged = await PDFDocument.create()
  merged.setTitle(options.title)
  merged.setProducer('fastify-shipments')
  merged.setCreator('fastify-shipments')
  merged.setCreationDate(options.date)
  merged.setModificationDate(options.date)
  // A PDF that several parts take pages of (a batch's slips between its labels) is read once.
  const sources = new Map<Uint8Array, PDFDocument>()
  for (const part of parts) {
    if (part.kind === 'pdf') {
      let source = sources.get(part.bytes)
      if (!source) {
        source = await PDFDocument.load(part.bytes, { ignoreEncryption: true, updateMetadata: false })
        sources.set(part.bytes, source)
      }
      const pages = await merged.copyPages(source, part.pages ? [...part.pages] : source.getPageIndices())
      for (const page of pages) merged.addPage(page)
    } else {
      const image = part.kind === 'png' ? await merged.embedPng(part.bytes) : await merged.embedJpg(part.bytes)
      const width = part.widthInches * 72
      const height = (image.height / image.width) * width
      merged.addPage([width, height]).drawImage(image, { x: 0, y: 0, width, height })
    }
    await yieldToEventLoop()
  }
  return Buffer.from(await merged.save())
}
