// The documents' heavy half (pdfkit, fontkit, bwip-js, @cantoo/pdf-lib, the DejaVu font): the service
// imports this module on the first document, so importing the package never loads them.
export { createFontStack, MissingGlyphError } from './fonts.js'
export { mergeParts, partKind } from './merge.js'
export { referenceBarcode, writePackingSlip } from './packing-slip.js'
export { pickListRows, writePickList } from './pick-list.js'
export { DocumentWriter } from './writer.js'
export { writeCommercialInvoice } from './commercial-invoice.js'
