// A tiny PDF writer for the files the stand-in serves (customs forms, ScanForms): PDF 1.4, US Letter
// pages of Helvetica text lines, ASCII only (anything else is written as `?`), so `pdftotext` reads the
// text back and a PDF merger takes the file. The stand-in needs no PDF library: a host testing its shop
// need not install the package's optional PDF stack for it.

const PAGE_WIDTH = 612
const PAGE_HEIGHT = 792
const MARGIN = 36
const TITLE_SIZE = 18
const TEXT_SIZE = 11
const LEADING = 14
/** Body lines that fit on a page under the title (the first page) or from the top (the others). */
const LINES_PER_PAGE = Math.floor((PAGE_HEIGHT - 2 * MARGIN - TITLE_SIZE - LEADING) / LEADING)

/** A PDF string literal's content: printable ASCII, with `\`, `(` and `)` escaped. */
const literal = (text: string) =>
  text
    .replace(/[^\x20-\x7e]/g, '?')
    .replace(/[\\()]/g, (character) => `\\${character}`)

/** One page's content stream: the title (first page only) and its lines, top down. */
function pageContent(title: string | null, lines: string[]): string {
  const top = PAGE_HEIGHT - MARGIN
  const parts: string[] = []
  if (title !== null) parts.push(`BT /F1 ${TITLE_SIZE} Tf ${MARGIN} ${top - TITLE_SIZE} Td (${literal(title)}) Tj ET`)
  const start = title === null ? top - TEXT_SIZE : top - TITLE_SIZE - LEADING - TEXT_SIZE
  if (lines.length > 0) {
    const shown = lines.map((line, index) => `${index === 0 ? '' : 'T* '}(${literal(line)}) Tj`).join('\n')
    parts.push(`BT /F1 ${TEXT_SIZE} Tf ${LEADING} TL ${MARGIN} ${start} Td\n${shown}\nET`)
  }
  return parts.join('\n')
}

/** A PDF of a title and text lines (`\n` separates them), on as many pages as the lines need. */
export function textPdf(title: string, text: string): Buffer {
  const lines = text === '' ? [] : text.split('\n')
  const pages: string[][] = []
  for (let at = 0; at === 0 || at < lines.length; at += LINES_PER_PAGE) pages.push(lines.slice(at, at + LINES_PER_PAGE))
  // Objects: 1 catalog, 2 page tree, 3 font, then a page and its content stream per page.
  const pageIds = pages.map((_, index) => 4 + index * 2)
  const objects: string[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
  ]
  pages.forEach((page, index) => {
    const content = pageContent(index === 0 ? title : null, page)
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${PAGE_WIDTH} ${PAGE_HEIGHT}] /Resources << /Font << /F1 3 0 R >> >> /Contents ${pageIds[index]! + 1} 0 R >>`)
    objects.push(`<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`)
  })
  let file = '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n'
  const offsets: number[] = []
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(file, 'latin1'))
    file += `${index + 1} 0 obj\n${object}\nendobj\n`
  })
  const xref = Buffer.byteLength(file, 'latin1')
  file += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`
  file += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return Buffer.from(file, 'latin1')
}
