// ShipStation's export document (spec 2.4) written as a string: CDATA text cleaned of characters XML
// 1.0 forbids, ShipStation's length limits applied by characters, and its units, numbers and dates.
import type { ExportAddress, ExportLineItem, ExportOrder } from '../order-store.js'
import { formatPlatformDate } from '../time.js'

// Everything outside XML 1.0's Char production; with the u flag a lone surrogate is one such character.
const ILLEGAL_XML_CHARACTERS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu
// Most text has no control character and no surrogate at all: one cheap test spares the replace.
const MAYBE_ILLEGAL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/

/** Removes the characters XML 1.0 cannot carry at all (control characters, lone surrogates, U+FFFE/F). */
export function removeIllegalXmlCharacters(value: string): string {
  return MAYBE_ILLEGAL.test(value) ? value.replace(ILLEGAL_XML_CHARACTERS, '') : value
}

/** The first `limit` characters (UTF-16 units, as ShipStation counts), never half a surrogate pair. */
export function limitCharacters(value: string, limit: number): string {
  if (value.length <= limit) return value
  const cut = value.charCodeAt(limit - 1)
  return value.slice(0, cut >= 0xd800 && cut <= 0xdbff ? limit - 1 : limit)
}

/**
 * Text as a CDATA section: nothing escaped inside it, `]]>` split across two sections, and a carriage
 * return written as `&#13;` between sections, since parsers turn a literal one into a line feed.
 */
function cdata(value: string | null | undefined, limit: number): string {
  if (!value) return ''
  let text = limitCharacters(removeIllegalXmlCharacters(value), limit)
  if (text.includes(']]>')) text = text.replaceAll(']]>', ']]]]><![CDATA[>')
  if (text.includes('\r')) text = text.replaceAll('\r', ']]>&#13;<![CDATA[')
  return `<![CDATA[${text}]]>`
}

const DECIMAL = /^-?\d+(\.\d+)?$/
/** A plain decimal (no thousands separators, no exponent); anything unreadable is 0. */
function decimal(value: string | number | null | undefined): string {
  if (typeof value === 'string' && DECIMAL.test(value)) return value
  const number = Number(value)
  return Number.isFinite(number) ? String(Math.round(number * 10_000) / 10_000) : '0'
}

/** Store weight units to one ShipStation accepts; kilograms become grams, grams stay grams. */
const WEIGHT_UNITS: Record<string, { unit: string; factor: number }> = {
  g: { unit: 'Grams', factor: 1 },
  gram: { unit: 'Grams', factor: 1 },
  grams: { unit: 'Grams', factor: 1 },
  gm: { unit: 'Grams', factor: 1 },
  kg: { unit: 'Grams', factor: 1000 },
  kilogram: { unit: 'Grams', factor: 1000 },
  kilograms: { unit: 'Grams', factor: 1000 },
  lb: { unit: 'Pounds', factor: 1 },
  lbs: { unit: 'Pounds', factor: 1 },
  pound: { unit: 'Pounds', factor: 1 },
  pounds: { unit: 'Pounds', factor: 1 },
  oz: { unit: 'Ounces', factor: 1 },
  ounce: { unit: 'Ounces', factor: 1 },
  ounces: { unit: 'Ounces', factor: 1 },
}

function weightOf(item: ExportLineItem): { weight: string; unit: string } {
  const unit = item.weightUnit ? WEIGHT_UNITS[item.weightUnit.trim().toLowerCase()] : undefined
  // A weight in a unit ShipStation cannot read is no weight at all rather than a wrong one.
  if (!unit || item.weight == null || !Number.isFinite(item.weight)) return { weight: '0', unit: '' }
  return { weight: String(Math.round(item.weight * unit.factor * 1000) / 1000), unit: unit.unit }
}

/** An absolute URL for ShipStation, or empty: protocol-relative and site-relative URLs are resolved. */
function absoluteUrl(url: string | null, siteUrl: string): string {
  if (!url) return ''
  if (/^https?:\/\//i.test(url)) return url
  try {
    return new URL(url.startsWith('//') ? `https:${url}` : url, siteUrl).href
  } catch {
    return ''
  }
}

export interface DocumentSettings {
  timeZone: string
  /** The site's origin, e.g. `https://shop.example.com`, against which relative image URLs resolve. */
  siteUrl: string
}

const MAX_OPTIONS = 100

/**
 * Writes the document into one growing string: appending small pieces to a single accumulator is
 * much cheaper than building each element as a string of its own and nesting them.
 */
function createWriter(settings: DocumentSettings) {
  let xml = ''
  const text = (name: string, value: string | null | undefined, limit: number) => {
    xml += `<${name}>${cdata(value, limit)}</${name}>`
  }
  const plain = (name: string, value: string) => {
    xml += `<${name}>${value}</${name}>`
  }

  function item(item: ExportLineItem) {
    const { weight, unit } = weightOf(item)
    xml += '<Item>'
    text('SKU', item.sku, 100)
    text('Name', item.name, 200)
    plain('Weight', weight)
    plain('Quantity', String(Math.trunc(item.quantity)))
    plain('UnitPrice', decimal(item.unitPrice))
    text('ImageUrl', absoluteUrl(item.imageUrl, settings.siteUrl), 2000)
    text('WeightUnits', unit, 20)
    xml += '<Adjustment>false</Adjustment><Options>'
    let optionCount = 0
    for (const name in item.options) {
      if (optionCount++ === MAX_OPTIONS) break
      xml += '<Option>'
      text('Name', name, 100)
      text('Value', String(item.options[name] ?? ''), 100)
      xml += '</Option>'
    }
    xml += '</Options>'
    // After spec 2.4's children, so their order stands: ShipStation echoes it in ShipNotice Items/Item.
    if (typeof item.id === 'number' && Number.isSafeInteger(item.id)) plain('LineItemID', String(item.id))
    xml += '</Item>'
  }

  /** The order's discount as ShipStation's adjustment line, named after its coupon. */
  function discount(order: ExportOrder) {
    const amount = Number(order.discount)
    if (!Number.isFinite(amount) || amount === 0) return
    xml += '<Item><SKU></SKU>'
    text('Name', order.couponCode?.trim() || 'Discount', 200)
    xml += '<Weight>0</Weight><Quantity>1</Quantity>'
    plain('UnitPrice', decimal(amount > 0 ? `-${order.discount.trim()}` : order.discount))
    xml += '<ImageUrl></ImageUrl><WeightUnits></WeightUnits><Adjustment>true</Adjustment><Options></Options></Item>'
  }

  function billTo(address: ExportAddress | null, email: string | null) {
    const a = address ?? ({} as Partial<ExportAddress>)
    xml += '<BillTo>'
    text('Name', a.name, 100)
    text('Address1', a.address1, 200)
    text('City', a.city, 100)
    text('State', a.state, 100)
    text('PostalCode', a.postalCode, 50)
    text('Country', address ? country(address) : '', 2)
    text('Phone', a.phone, 50)
    text('Email', a.email || email, 100)
    xml += '</BillTo>'
  }

  function shipTo(address: ExportAddress | null) {
    const a = address ?? ({} as Partial<ExportAddress>)
    xml += '<ShipTo>'
    text('Name', a.name, 100)
    text('Company', a.company, 100)
    text('Address1', a.address1, 200)
    text('Address2', a.address2, 200)
    text('City', a.city, 100)
    text('State', a.state, 100)
    text('PostalCode', a.postalCode, 50)
    text('Country', address ? country(address) : '', 2)
    text('Phone', a.phone, 50)
    xml += '</ShipTo>'
  }

  function order(order: ExportOrder) {
    const lastModified = formatPlatformDate(order.dateUpdated.getTime(), settings.timeZone)
    xml += '<Order>'
    plain('OrderID', String(order.id))
    text('OrderNumber', order.reference, 50)
    text('OrderStatus', order.statusHandle, 50)
    plain('OrderTotal', decimal(order.total))
    plain('TaxAmount', decimal(order.tax))
    plain('ShippingAmount', decimal(order.shipping))
    plain('LastModified', lastModified)
    text('PaymentMethod', order.paymentMethod, 50)
    text('ShippingMethod', order.shippingMethod, 100)
    xml += '<Items>'
    for (const line of order.items) item(line)
    discount(order)
    xml += '</Items><Customer>'
    text('CustomerCode', order.customerCode, 100)
    // BillTo/Name is required: without a billing address the shipping address is billed.
    billTo(order.billingAddress ?? order.shippingAddress, order.email)
    shipTo(order.shippingAddress)
    xml += '</Customer>'
    text('InternalNotes', order.internalNotes, 1000)
    plain('Gift', order.isGift ? 'true' : 'false')
    plain('OrderDate', order.dateOrdered ? formatPlatformDate(order.dateOrdered.getTime(), settings.timeZone) : lastModified)
    text('CustomField1', order.customFields[0], 100)
    text('CustomField2', order.customFields[1], 100)
    text('CustomField3', order.customFields[2], 100)
    text('CustomerNotes', order.customerNotes, 1000)
    text('GiftMessage', order.giftMessage, 1000)
    xml += '</Order>'
  }

  return {
    document(orders: readonly ExportOrder[], pages: number) {
      xml = `<?xml version="1.0" encoding="utf-8"?>\n<Orders pages="${pages}">`
      for (const each of orders) order(each)
      return xml + '</Orders>'
    },
  }
}

const country = (address: ExportAddress) => (address.country ?? '').trim().toUpperCase()

/** The whole export document: `<Orders pages="N">` and one `<Order>` per order, in the given order. */
export function renderExportDocument(orders: readonly ExportOrder[], pages: number, settings: DocumentSettings): string {
  return createWriter(settings).document(orders, pages)
}
