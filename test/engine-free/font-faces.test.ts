// A document's faces share the font parsed at registration (its own glyph cache only): parsing DejaVu
// Sans again for every document made each packing slip several times slower. fontkit 2 keeps its
// glyph cache as an object, which an array check took for "unknown fontkit" and re-parsed every time.
import t from 'tap'
import { createFontStack } from '../../src/documents/fonts.js'

t.test("each document's faces inherit the parsed fonts, each with a glyph cache of its own", async (t) => {
  const stack = createFontStack([], 'replace')
  const first = stack.facesForDocument()
  const second = stack.facesForDocument()
  t.same(first.map((face) => face.name), ['f0', 'f0b'])
  for (const [index, face] of first.entries()) {
    const shared = Object.getPrototypeOf(face.font)
    // A parsed font holds its tables itself; the class's prototype (what a font parsed again inherits) does not.
    t.ok(Object.hasOwn(shared, '_tables'), `${face.name}: built on the font parsed at registration, not parsed again`)
    t.equal(Object.getPrototypeOf(second[index].font), shared, `${face.name}: the same parsed font for the next document`)
    const own = face.font as unknown as { _glyphs: unknown }
    t.not(own._glyphs, (second[index].font as unknown as { _glyphs: unknown })._glyphs, `${face.name}: glyph caches are not shared`)
  }
  // A glyph met in one document stays in its cache.
  first[0].font.glyphForCodePoint(0x391)
  t.equal(Object.keys((second[0].font as unknown as { _glyphs: object })._glyphs).length, 0, "the next document's cache is empty")
})
