// The fonts of the documents: DejaVu Sans (Latin with accents, Greek, Cyrillic) shipped with the
// package, then the host's own fonts (CJK, say), and what happens to a character none of them can draw.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import * as fontkit from 'fontkit'

/** A TrueType or OpenType font: its bytes, or the path of its file. */
export type FontSource = Uint8Array | string

/** A font the host adds after DejaVu Sans: tried, in order, for text DejaVu cannot draw. */
export interface DocumentFont {
  regular: FontSource
  /** Default: the regular face. */
  bold?: FontSource | undefined
}

/** One face as pdfkit embeds it, and what it can draw. */
interface LoadedFace {
  name: string
  /** Parsed once, at registration: pdfkit takes a fontkit font as it is, so no document parses it again. */
  font: fontkit.Font
  covers(codePoint: number): boolean
}

export interface FontStack {
  /** The faces by name, for pdfkit's registerFont. */
  faces: ReadonlyArray<{ name: string; font: fontkit.Font }>
  /**
   * The face to write `text` in (the first of the stack that draws every character) and the text as it
   * is written: characters no face draws are replaced by U+FFFD, or refused (`missing`), per the option.
   */
  pick(text: string, bold: boolean): { face: string; text: string }
}

/** A character none of the fonts can draw, under `missingGlyphs: 'error'`. */
export class MissingGlyphError extends Error {
  constructor(readonly codePoint: number) {
    super(`No font of the documents can draw the character U+${codePoint.toString(16).toUpperCase().padStart(4, '0')} (${String.fromCodePoint(codePoint)}): add a font that has it (the documents.fonts option).`)
    this.name = 'MissingGlyphError'
  }
}

const require = createRequire(import.meta.url)
let dejaVu: { regular: Buffer; bold: Buffer } | undefined
/** DejaVu Sans from the dejavu-fonts-ttf package, read once. */
function builtIn() {
  dejaVu ??= {
    regular: readFileSync(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf')),
    bold: readFileSync(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf')),
  }
  return dejaVu
}

function bytesOf(source: FontSource): Buffer {
  return typeof source === 'string' ? readFileSync(source) : Buffer.from(source.buffer, source.byteOffset, source.byteLength)
}

function face(name: string, bytes: Buffer, option: string): LoadedFace {
  let font: fontkit.Font | fontkit.FontCollection
  try {
    font = fontkit.create(bytes)
  } catch (error) {
    throw new Error(`${option} is not a TrueType or OpenType font: ${(error as Error).message}`)
  }
  // A collection (.ttc) names its fonts; pdfkit embeds single fonts only.
  if (!('hasGlyphForCodePoint' in font)) throw new Error(`${option} is a font collection: pass a single font (.ttf or .otf)`)
  const single = font
  return { name, font: single, covers: (codePoint) => single.hasGlyphForCodePoint(codePoint) }
}

/** Characters that need no glyph: line breaks and tabs are layout, not text. */
const LAYOUT = /[\t\n\r]/

/** The stack: DejaVu Sans first, then the host's fonts. Throws (naming the option) on a font that cannot be read. */
export function createFontStack(hostFonts: readonly DocumentFont[], missingGlyphs: 'replace' | 'error'): FontStack {
  const { regular, bold } = builtIn()
  const regulars = [face('f0', regular, 'DejaVu Sans')]
  const bolds = [face('f0b', bold, 'DejaVu Sans Bold')]
  hostFonts.forEach((font, index) => {
    const option = `documents.fonts.${index}`
    const loaded = face(`f${index + 1}`, bytesOf(font.regular), `${option}.regular`)
    regulars.push(loaded)
    bolds.push(font.bold === undefined ? { ...loaded } : face(`f${index + 1}b`, bytesOf(font.bold), `${option}.bold`))
  })
  const faces = [...regulars, ...bolds].filter((each, index, all) => all.findIndex((other) => other.name === each.name) === index)
  return {
    faces: faces.map(({ name, font }) => ({ name, font })),
    pick(text, isBold) {
      const stack = isBold ? bolds : regulars
      const codePoints = [...text].map((character) => character.codePointAt(0)!)
      const drawable = (each: LoadedFace) => codePoints.every((codePoint) => LAYOUT.test(String.fromCodePoint(codePoint)) || each.covers(codePoint))
      const whole = stack.find(drawable)
      if (whole) return { face: whole.name, text }
      // No one face draws it all: the face that draws the most, and the rest replaced or refused.
      const score = (each: LoadedFace) => codePoints.filter((codePoint) => each.covers(codePoint)).length
      const best = stack.reduce((winner, each) => (score(each) > score(winner) ? each : winner))
      const missing = codePoints.find((codePoint) => !LAYOUT.test(String.fromCodePoint(codePoint)) && !best.covers(codePoint))!
      if (missingGlyphs === 'error') throw new MissingGlyphError(missing)
      const replaced = codePoints.map((codePoint) => (LAYOUT.test(String.fromCodePoint(codePoint)) || best.covers(codePoint) ? String.fromCodePoint(codePoint) : '\uFFFD')).join('')
      return { face: best.name, text: replaced }
    },
  }
}
