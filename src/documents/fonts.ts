// The fonts of the documents: DejaVu Sans (Latin with accents, Greek, Cyrillic) shipped with the
// package, then the host's own fonts (CJK, say), and what happens to a character none of them can draw.
import { readFileSync } from 'node:fs'
import * as fontkit from 'fontkit'
import { packageFile } from '../package-files.js'

/** A TrueType or OpenType font or collection: its bytes, or the path of its file. */
export type FontSource = Uint8Array | string

/** A font the host adds after DejaVu Sans: tried, in order, for text DejaVu cannot draw. */
export interface DocumentFont {
  regular: FontSource
  /** Default: the regular face. */
  bold?: FontSource | undefined
  /** When `regular` is a collection (.ttc): the PostScript name of the face to take from it. */
  regularFace?: string | undefined
  /** When `bold` is a collection (.ttc): the PostScript name of the face to take from it. */
  boldFace?: string | undefined
}

/** One face as pdfkit embeds it, and what it can draw. */
interface LoadedFace {
  name: string
  /** Parsed once, at registration: pdfkit takes a fontkit font as it is, so no document parses it again. */
  font: fontkit.Font
  covers(codePoint: number): boolean
}

/** A stretch of text written in one face. */
export interface TextRun {
  face: string
  text: string
}

export interface FontStack {
  /** The faces by name for one document's registerFont: each document gets its own (see faceForDocument). */
  facesForDocument(): Array<{ name: string; font: fontkit.Font }>
  /**
   * `text` as runs, each in the face that draws it: a run stays in its face while that face draws the
   * next character, and otherwise moves to the first face of the stack that does (DejaVu Sans first),
   * so a host CJK font without digits leaves "1-1" to DejaVu. Characters no face draws are replaced
   * by U+FFFD, or refused (MissingGlyphError), per the option.
   */
  runs(text: string, bold: boolean): TextRun[]
}

/** A character none of the fonts can draw, under `missingGlyphs: 'error'`. */
export class MissingGlyphError extends Error {
  constructor(readonly codePoint: number) {
    super(`No font of the documents can draw the character U+${codePoint.toString(16).toUpperCase().padStart(4, '0')} (${String.fromCodePoint(codePoint)}): add a font that has it (the documents.fonts option).`)
    this.name = 'MissingGlyphError'
  }
}

let dejaVu: { regular: Buffer; bold: Buffer } | undefined
/**
 * DejaVu Sans, read once: its two faces ship in the package's assets/fonts (with their licence), not
 * as the dejavu-fonts-ttf package, whose other 20 files no document uses (CONTRIBUTING, "Install size").
 */
function builtIn() {
  dejaVu ??= {
    regular: readFileSync(packageFile('assets/fonts/DejaVuSans.ttf')),
    bold: readFileSync(packageFile('assets/fonts/DejaVuSans-Bold.ttf')),
  }
  return dejaVu
}

function bytesOf(source: FontSource): Buffer {
  return typeof source === 'string' ? readFileSync(source) : Buffer.from(source.buffer, source.byteOffset, source.byteLength)
}

function face(name: string, bytes: Buffer, option: string, faceName: string | undefined, faceOption: string): LoadedFace {
  let font: fontkit.Font | fontkit.FontCollection
  try {
    font = fontkit.create(bytes)
  } catch (error) {
    throw new Error(`${option} is not a TrueType or OpenType font: ${(error as Error).message}`)
  }
  if ('fonts' in font) {
    // A collection (.ttc, as Debian's Noto CJK ships): pdfkit embeds one face of it, named by the host.
    const names = font.fonts.map((each) => each.postscriptName)
    const picked = faceName === undefined ? undefined : font.fonts.find((each) => each.postscriptName === faceName)
    if (!picked) {
      throw new Error(`${option} is a font collection: name the face to use in ${faceOption} (one of ${names.join(', ')})${faceName === undefined ? '' : `; ${JSON.stringify(faceName)} is not among them`}`)
    }
    font = picked
  } else if (faceName !== undefined && font.postscriptName !== faceName) {
    throw new Error(`${faceOption} names a face of a collection, but ${option} is a single font (${font.postscriptName})`)
  }
  const single = font
  return { name, font: single, covers: (codePoint) => single.hasGlyphForCodePoint(codePoint) }
}

/**
 * The face for one document: the parsed font shared (its tables, the cost of parsing a face, ~20 ms
 * for DejaVu Sans), its glyph cache its own. fontkit keeps one glyph object per glyph id with the code
 * points it was first met with, and pdfkit writes a glyph's text (what search, copy and screen readers
 * read) from them. A glyph first met as the component of another (DejaVu draws Greek Α with Latin A's
 * outline) is cached with none: shared by every document, one slip with "Αθήνα" took "A" out of the
 * text of every later document of the host. fontkit has no public way to start a cache afresh, so this
 * leans on two of its internals (`_glyphs`, and `_layoutEngine` built for this face); a fontkit that
 * has neither gets the font parsed again, which is correct at the cost of the parse.
 */
function faceForDocument(shared: fontkit.Font, bytes: () => fontkit.Font): fontkit.Font {
  const internals = shared as unknown as { _glyphs?: unknown; _layoutEngine?: { constructor: new (font: unknown) => unknown } }
  // fontkit 2 keeps the cache as an object keyed by glyph id (an array in older releases).
  const cache = internals._glyphs
  if (typeof cache !== 'object' || cache === null || typeof internals._layoutEngine?.constructor !== 'function') return bytes()
  const own = Object.create(shared) as fontkit.Font & { _glyphs: unknown }
  own._glyphs = Array.isArray(cache) ? [] : {}
  Object.defineProperty(own, '_layoutEngine', { value: new internals._layoutEngine.constructor(own) })
  return own
}

/** Characters that need no glyph: line breaks and tabs are layout, not text. */
const LAYOUT = /[\t\n\r]/
const REPLACEMENT = 0xfffd

/** The stack: DejaVu Sans first, then the host's fonts. Throws (naming the option) on a font that cannot be read. */
export function createFontStack(hostFonts: readonly DocumentFont[], missingGlyphs: 'replace' | 'error'): FontStack {
  const { regular, bold } = builtIn()
  const regulars = [face('f0', regular, 'DejaVu Sans', undefined, '')]
  const bolds = [face('f0b', bold, 'DejaVu Sans Bold', undefined, '')]
  const sources = new Map<string, () => fontkit.Font>([
    ['f0', () => fontkit.create(regular) as fontkit.Font],
    ['f0b', () => fontkit.create(bold) as fontkit.Font],
  ])
  hostFonts.forEach((font, index) => {
    const option = `documents.fonts.${index}`
    const regularBytes = bytesOf(font.regular)
    const loaded = face(`f${index + 1}`, regularBytes, `${option}.regular`, font.regularFace, `${option}.regularFace`)
    regulars.push(loaded)
    sources.set(loaded.name, () => fontkit.create(regularBytes, font.regularFace) as fontkit.Font)
    if (font.bold === undefined) bolds.push({ ...loaded })
    else {
      const boldBytes = bytesOf(font.bold)
      const loadedBold = face(`f${index + 1}b`, boldBytes, `${option}.bold`, font.boldFace, `${option}.boldFace`)
      bolds.push(loadedBold)
      sources.set(loadedBold.name, () => fontkit.create(boldBytes, font.boldFace) as fontkit.Font)
    }
  })
  const faces = [...regulars, ...bolds].filter((each, index, all) => all.findIndex((other) => other.name === each.name) === index)
  return {
    facesForDocument: () => faces.map(({ name, font }) => ({ name, font: faceForDocument(font, sources.get(name)!) })),
    runs(text, isBold) {
      const stack = isBold ? bolds : regulars
      // The common case, one face for the whole text, without splitting it.
      const whole = stack.find((each) => [...text].every((character) => LAYOUT.test(character) || each.covers(character.codePointAt(0)!)))
      if (whole) return [{ face: whole.name, text }]
      const runs: TextRun[] = []
      let current: LoadedFace | undefined
      for (const character of text) {
        let codePoint = character.codePointAt(0)!
        if (!(LAYOUT.test(character) || current?.covers(codePoint))) {
          let next = stack.find((each) => each.covers(codePoint))
          if (!next && !LAYOUT.test(character)) {
            if (missingGlyphs === 'error') throw new MissingGlyphError(codePoint)
            codePoint = REPLACEMENT
            next = current?.covers(REPLACEMENT) ? current : stack.find((each) => each.covers(REPLACEMENT)) ?? stack[0]!
          }
          current = next ?? current ?? stack[0]!
        }
        const last = runs.at(-1)
        if (last && last.face === current!.name) last.text += String.fromCodePoint(codePoint)
        else runs.push({ face: current!.name, text: String.fromCodePoint(codePoint) })
      }
      return runs
    },
  }
}
