// A pdfkit document with the documents' fonts, text written in the face that can draw it, pages that
// break before the footer's band, and the bytes collected as pdfkit writes them.
import PDFDocument from 'pdfkit'
import type { FontStack, TextRun } from './fonts.js'

export type PageSize = 'A4' | 'LETTER'

export const MARGIN = 40
const FOOTER_BAND = 28

export interface TextOptions {
  bold?: boolean
  size?: number
  width?: number
  align?: 'left' | 'right' | 'center'
  color?: string
}

/** A document being written: `bytes()` ends it and resolves with the PDF. */
export class DocumentWriter {
  readonly doc: PDFKit.PDFDocument
  private readonly chunks: Buffer[] = []
  private readonly done: Promise<Buffer>

  constructor(
    private readonly fonts: FontStack,
    options: { size: PageSize; title: string; date: Date },
  ) {
    // CreationDate and ModDate set: the same input gives the same bytes (no clock in the file).
    this.doc = new PDFDocument({
      size: options.size,
      margin: MARGIN,
      bufferPages: true,
      autoFirstPage: false,
      info: { Title: options.title, Producer: 'fastify-shipments', Creator: 'fastify-shipments', CreationDate: options.date, ModDate: options.date },
    })
    // pdfkit embeds a fontkit font it is given as it is (its types name only bytes and paths).
    for (const face of fonts.facesForDocument()) this.doc.registerFont(face.name, face.font as unknown as Buffer)
    this.doc.on('data', (chunk: Buffer) => this.chunks.push(chunk))
    this.done = new Promise((resolve, reject) => {
      this.doc.on('end', () => resolve(Buffer.concat(this.chunks)))
      this.doc.on('error', reject)
    })
  }

  get pageWidth() {
    return this.doc.page.width
  }

  /** The lowest y that content may reach: the footer's band lies below. */
  get bottom() {
    return this.doc.page.height - MARGIN - FOOTER_BAND
  }

  get contentWidth() {
    return this.doc.page.width - 2 * MARGIN
  }

  addPage() {
    this.doc.addPage()
    return MARGIN
  }

  private style(face: string, options: TextOptions) {
    this.doc.font(face).fontSize(options.size ?? 10).fillColor(options.color ?? '#000000')
  }

  /**
   * The height `text` takes in `width`. Text in more than one face (see FontStack.runs) is measured in
   * each of its faces and the tallest taken: pdfkit measures one font at a time.
   */
  heightOf(text: string, options: TextOptions & { width: number }): number {
    const runs = this.fonts.runs(text, options.bold ?? false)
    const written = runs.map((run) => run.text).join('')
    return Math.max(
      ...[...new Set(runs.map((run) => run.face))].map((face) => {
        this.style(face, options)
        return this.doc.heightOfString(written, { width: options.width })
      }),
    )
  }

  /** The width `text` takes on one line (in the widest of its faces). */
  widthOf(text: string, options: TextOptions): number {
    const runs = this.fonts.runs(text, options.bold ?? false)
    const written = runs.map((run) => run.text).join('')
    return Math.max(
      ...[...new Set(runs.map((run) => run.face))].map((face) => {
        this.style(face, options)
        return this.doc.widthOfString(written)
      }),
    )
  }

  /** Writes `text` at (x, y) and returns the y below it. */
  text(text: string, x: number, y: number, options: TextOptions = {}): number {
    const runs = this.fonts.runs(text, options.bold ?? false)
    const width = options.width ?? this.contentWidth
    const layout = { width, align: options.align ?? 'left', lineBreak: true } as const
    if (runs.length === 1) {
      const [run] = runs as [TextRun]
      this.style(run.face, options)
      this.doc.text(run.text, x, y, layout)
      return y + this.doc.heightOfString(run.text, { width })
    }
    // pdfkit continues a line across fonts with `continued`, and leaves its y below the last line.
    runs.forEach((run, index) => {
      this.style(run.face, options)
      const continued = index < runs.length - 1
      if (index === 0) this.doc.text(run.text, x, y, { ...layout, continued })
      else this.doc.text(run.text, { ...layout, continued })
    })
    return Math.max(this.doc.y, y + this.heightOf(text, { ...options, width }))
  }

  /** Writes a footer on the pages buffered since the last flush, then lets pdfkit write them out; returns their count. */
  footers(footer: (page: number, pages: number) => string): number {
    const range = this.doc.bufferedPageRange()
    for (let index = 0; index < range.count; index++) {
      this.doc.switchToPage(range.start + index)
      // Below the bottom margin: pdfkit would start a new page for text there, unless the margin is lifted.
      const margin = this.doc.page.margins.bottom
      this.doc.page.margins.bottom = 0
      this.text(footer(index + 1, range.count), MARGIN, this.doc.page.height - MARGIN - 12, { size: 8, color: '#555555', align: 'center' })
      this.doc.page.margins.bottom = margin
    }
    this.doc.flushPages()
    return range.count
  }

  bytes(): Promise<Buffer> {
    this.doc.end()
    return this.done
  }
}

/** Lets other work run between pages: a batch of 200 slips never holds the event loop for long. */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve))
