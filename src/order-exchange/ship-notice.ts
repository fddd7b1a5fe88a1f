// Reading a ship notification: parameters from the query, a form or JSON body, and ShipStation's
// ShipNotice XML, parsed without DTDs or entity expansion.
import { create } from 'xmlbuilder2'

export interface ShipNotifyParameters {
  orderNumber: string | null
  carrier: string | null
  service: string | null
  trackingNumber: string | null
  /** ShipNotice/OrderID: the original order of a split order whose number the store does not know. */
  orderId: string | null
}

const PARAMETERS = {
  orderNumber: { query: 'order_number', notice: 'OrderNumber' },
  carrier: { query: 'carrier', notice: 'Carrier' },
  service: { query: 'service', notice: 'Service' },
  trackingNumber: { query: 'tracking_number', notice: 'TrackingNumber' },
  orderId: { query: null, notice: 'OrderID' },
} as const

/** The text of the ShipNotice document's top-level elements, or null when the body is not one. */
export function parseShipNotice(xml: string): Record<string, string> | null {
  const text = xml.replace(/^\uFEFF/, '').trim()
  // A ShipNotice never has a DTD; refusing one rules out entity tricks whatever the parser does.
  if (!text.startsWith('<') || /<!DOCTYPE|<!ENTITY/i.test(text)) return null
  try {
    const root = create(text).root().node as unknown as { nodeName: string; childNodes: ArrayLike<{ nodeType: number; nodeName: string; textContent: string | null }> }
    if (root.nodeName !== 'ShipNotice') return null
    const values: Record<string, string> = {}
    for (const child of Array.from(root.childNodes)) {
      if (child.nodeType === 1) values[child.nodeName] = (child.textContent ?? '').trim()
    }
    return values
  } catch {
    return null
  }
}

/**
 * Parameters of a form (`a=b&c=d`, a repeated name keeps its first value) or JSON object body (one value
 * per key, as JSON.parse reads it), as strings; none for XML or an empty body.
 */
export function parseParameterBody(body: string, contentType: string): Record<string, string> {
  if (body === '' || body.trimStart().startsWith('<')) return {}
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
 * (ShipStation sends `service=` for services without a name).
 */
export function readShipNotifyParameters(
  query: Record<string, unknown>,
  rawBody: Buffer | undefined,
  contentType: string | undefined,
): { parameters: ShipNotifyParameters; bodyUnreadable: boolean } {
  const body = rawBody && rawBody.length > 0 ? rawBody.toString('utf8') : ''
  const notice = body ? parseShipNotice(body) : null
  const bodyParameters = parseParameterBody(body, contentType ?? '')
  const parameters = {} as ShipNotifyParameters
  for (const [key, source] of Object.entries(PARAMETERS) as Array<[keyof ShipNotifyParameters, (typeof PARAMETERS)[keyof typeof PARAMETERS]]>) {
    const fromQuery = source.query ? query[source.query] : undefined
    const fromBody = source.query ? bodyParameters[source.query] : undefined
    const value = typeof fromQuery === 'string' ? fromQuery : (fromBody ?? notice?.[source.notice])
    parameters[key] = typeof value === 'string' ? value.trim() : null
  }
  return { parameters, bodyUnreadable: body.trimStart().startsWith('<') && notice === null }
}
