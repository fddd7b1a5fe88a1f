// Reading a ship notification: parameters from the query, a form or JSON body, and ShipStation's
// ShipNotice XML. The XML is read by a streaming parser (saxes) in time linear in its size, with its
// structure bounded while it is read, well-formedness checked, and no DTD or entity expansion at all.
import { TextDecoder } from 'node:util'
import type * as Saxes from 'saxes'
import { OrderExchangeErrors } from '../errors.js'
import { requireOnFirstUse } from '../lazy.js'

/** saxes is required with the first ship notice in XML: a host without the order exchange never loads it. */
const saxes = requireOnFirstUse<typeof Saxes>('saxes for ship notices in XML', 'saxes')

export interface ShipNotifyParameters {
  orderNumber: string | null
  carrier: string | null
  service: string | null
  trackingNumber: string | null
  /** ShipNotice/OrderID: the original order of a split order whose number the store does not know. */
  orderId: string | null
  /** ShipNotice Items/Item: what the package held. Absent, null or empty: a notification for the whole order. */
  items?: ShipNoticeItem[] | null | undefined
}

/** One ShipNotice Items/Item, its values as sent (null when the element is missing); the service reads them. */
export interface ShipNoticeItem {
  sku: string | null
  name: string | null
  quantity: string | null
  /** The LineItemID the export sent, echoed by ShipStation. */
  lineItemId: string | null
}

/** A ShipNotice as read: the text of its top-level elements (the first of each name) and its items. */
export interface ShipNotice {
  values: Record<string, string>
  items: ShipNoticeItem[]
}

const ITEM_VALUES: Readonly<Record<string, keyof ShipNoticeItem>> = { SKU: 'sku', Name: 'name', Quantity: 'quantity', LineItemID: 'lineItemId' }

const PARAMETERS = {
  orderNumber: { query: 'order_number', notice: 'OrderNumber' },
  carrier: { query: 'carrier', notice: 'Carrier' },
  service: { query: 'service', notice: 'Service' },
  trackingNumber: { query: 'tracking_number', notice: 'TrackingNumber' },
  orderId: { query: null, notice: 'OrderID' },
} as const

/**
 * The shape a ShipNotice may have. A real one is three levels deep (ShipNotice, Items, Item) with a
 * few dozen elements per item; these bounds leave room for hundreds of items and refuse the shapes
 * that make XML parsers slow (deep nesting, elements or attributes by the thousand).
 */
export const SHIP_NOTICE_LIMITS = { depth: 16, elements: 10_000, attributesPerElement: 32, items: 500 } as const

const refuse = (reason: string) => new OrderExchangeErrors.UnreadableShipNotice(reason)

/** An XML body starts with `<` after an optional byte order mark and white space. */
export const looksLikeXml = (body: string) => /^\uFEFF?\s*</.test(body)

/**
 * The text of a ShipNotice body, decoded by its byte order mark, else the encoding its XML
 * declaration names, else UTF-8. Bytes that are not valid in that encoding, or an encoding this
 * Node.js cannot decode, are refused rather than read as something else.
 */
export function decodeXmlBody(raw: Buffer): string {
  let encoding = 'utf-8'
  if (raw[0] === 0xfe && raw[1] === 0xff) encoding = 'utf-16be'
  else if (raw[0] === 0xff && raw[1] === 0xfe) encoding = 'utf-16le'
  else if (raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) encoding = 'utf-8'
  else {
    // The declaration is ASCII in every encoding a declaration can name without a byte order mark.
    const declared = /^(?:\xEF\xBB\xBF)?\s*<\?xml\s[^>]*?\bencoding\s*=\s*["']([A-Za-z0-9._:-]{1,40})["']/.exec(raw.subarray(0, 200).toString('latin1'))
    if (declared) encoding = declared[1].toLowerCase()
  }
  let decoder: TextDecoder
  try {
    decoder = new TextDecoder(encoding, { fatal: true })
  } catch {
    throw refuse(`the declared encoding "${encoding}" is not supported`)
  }
  try {
    return decoder.decode(raw)
  } catch {
    throw refuse(`it is not valid ${encoding}`)
  }
}

/**
 * The text of the ShipNotice document's top-level elements (the first of each name), and its
 * Items/Item elements (SKU, Name, Quantity, LineItemID: the first of each; at most `items` of them).
 * Refuses, with a 400 naming why, a body that is not well-formed XML, has a DTD, is not a ShipNotice,
 * or is shaped beyond SHIP_NOTICE_LIMITS; the parse stops at the first problem.
 */
export function parseShipNotice(xml: string): ShipNotice {
  const values: Record<string, string> = Object.create(null)
  const items: ShipNoticeItem[] = []
  const parser = new (saxes().SaxesParser)({ position: false })
  let depth = 0
  let elements = 0
  let child: string | null = null
  let text = ''
  // Inside ShipNotice/Items: the Item being read (depth 3) and its value element being read (depth 4).
  let item: ShipNoticeItem | null = null
  let itemValue: keyof ShipNoticeItem | null = null
  let itemText = ''
  parser.on('doctype', () => {
    throw refuse('a DTD is not allowed')
  })
  parser.on('opentag', (tag) => {
    depth++
    elements++
    if (depth > SHIP_NOTICE_LIMITS.depth) throw refuse(`elements nest deeper than ${SHIP_NOTICE_LIMITS.depth} levels`)
    if (elements > SHIP_NOTICE_LIMITS.elements) throw refuse(`it has more than ${SHIP_NOTICE_LIMITS.elements} elements`)
    let attributes = 0
    for (const _ in tag.attributes) {
      if (++attributes > SHIP_NOTICE_LIMITS.attributesPerElement) {
        throw refuse(`an element has more than ${SHIP_NOTICE_LIMITS.attributesPerElement} attributes`)
      }
    }
    if (depth === 1 && tag.name !== 'ShipNotice') throw refuse(`the root element is ${tag.name}, not ShipNotice`)
    if (depth === 2) {
      child = tag.name
      text = ''
    } else if (depth === 3 && child === 'Items' && tag.name === 'Item') {
      if (items.length === SHIP_NOTICE_LIMITS.items) throw refuse(`it lists more than ${SHIP_NOTICE_LIMITS.items} items`)
      item = { sku: null, name: null, quantity: null, lineItemId: null }
      items.push(item)
    } else if (depth === 4 && item !== null) {
      const key = Object.hasOwn(ITEM_VALUES, tag.name) ? ITEM_VALUES[tag.name] : null
      itemValue = key !== null && item[key] === null ? key : null
      itemText = ''
    }
  })
  const collect = (chunk: string) => {
    if (depth >= 2) text += chunk
    if (depth >= 4 && itemValue !== null) itemText += chunk
  }
  parser.on('text', collect)
  parser.on('cdata', collect)
  parser.on('closetag', () => {
    if (depth === 2 && child !== null && !(child in values)) values[child] = text
    if (depth === 3) item = null
    if (depth === 4 && item !== null && itemValue !== null) {
      item[itemValue] = itemText
      itemValue = null
    }
    depth--
  })
  parser.on('error', (error) => {
    throw refuse(`it is not well-formed XML (${error.message.replace(/^undefined:\d*:?\d*:?\s*/, '')})`)
  })
  parser.write(xml.replace(/^\uFEFF/, '')).close()
  return { values, items }
}

/**
 * Parameters of a form (`a=b&c=d`, a repeated name keeps its first value) or JSON object body (one value
 * per key, as JSON.parse reads it), as strings; none for XML or an empty body.
 */
export function parseParameterBody(body: string, contentType: string): Record<string, string> {
  if (body === '' || looksLikeXml(body)) return {}
  if (/json/i.test(contentType)) {
    try {
      const parsed: unknown = JSON.parse(body)
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return {}
      return Object.fromEntries(
        Object.entries(parsed).filter(([, value]) => ['string', 'number'].includes(typeof value)).map(([key, value]) => [key, String(value)]),
      )
    } catch {
      return {}
    }
  }
  // A parameter sent twice counts once, with its first value, as in the query string.
  const parameters: Record<string, string> = Object.create(null)
  for (const [name, value] of new URLSearchParams(body)) if (!Object.hasOwn(parameters, name)) parameters[name] = value
  return parameters
}

/**
 * The parameters of a ship notification. A query parameter wins; then a form or JSON body parameter
 * of the same name; then the ShipNotice element. A parameter that is present but empty stays empty
 * (ShipStation sends `service=` for services without a name). An XML body must be a readable
 * ShipNotice: one that is not is refused (400), never half-read.
 */
export function readShipNotifyParameters(
  query: Record<string, unknown>,
  rawBody: Buffer | undefined,
  contentType: string | undefined,
): ShipNotifyParameters {
  const bytes = rawBody ?? Buffer.alloc(0)
  const utf16 = (bytes[0] === 0xfe && bytes[1] === 0xff) || (bytes[0] === 0xff && bytes[1] === 0xfe)
  const body = bytes.length > 0 && !utf16 ? bytes.toString('utf8') : ''
  const notice = utf16 || looksLikeXml(body) ? parseShipNotice(decodeXmlBody(bytes)) : null
  const bodyParameters = notice ? {} : parseParameterBody(body, contentType ?? '')
  const parameters = {} as ShipNotifyParameters
  for (const [key, source] of Object.entries(PARAMETERS) as Array<[keyof typeof PARAMETERS, (typeof PARAMETERS)[keyof typeof PARAMETERS]]>) {
    const fromQuery = source.query ? query[source.query] : undefined
    const fromBody = source.query ? bodyParameters[source.query] : undefined
    const value = typeof fromQuery === 'string' ? fromQuery : (fromBody ?? notice?.values[source.notice])
    // Trimmed by the service, the one place every caller's values pass through.
    parameters[key] = typeof value === 'string' ? value : null
  }
  if (notice && notice.items.length > 0) parameters.items = notice.items
  return parameters
}
