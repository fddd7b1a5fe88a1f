// ShipStation's export document (spec 2.4) written as a string: CDATA text cleaned of characters XML
// 1.0 forbids, ShipStation's length limits applied by characters, and its units, numbers and dates.
import type { ExportAddress, ExportLineItem, ExportOrder } from '../orders/order-store.js'
import { formatPlatformDate } from '../time.js'

// Everything outside XML 1.0's Char production; with the u flag a lone surrogate is one such character.
const ILLEGAL_XML_CHARACTERS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu
const PLAIN_ASCII = /^[\t\n\r\u0020-\u007E]*$/

/** Removes the characters XML 1.0 cannot carry at all (control characters, lone surrogates, U+FFFE/F). */
export function removeIllegalXmlCharacters(value: string): string {
  return PLAIN_ASCII.test(value) ? value : value.replace(ILLEGAL_XML_CHARACTERS, '')
}

/** The first `limit` characters (UTF-16 units, as ShipStation counts), never half a surrogate pair. */
export function limitCharacters(value: string, limit: number): string {
  if (value.length <= limit) return value
  const cut = value.charCodeAt(limit - 1)
  return value.slice(0, cut >= 0xd800 && cut <= 0xdbff ? limit - 1 : limit)
}

/** Text as a CDATA section: nothing escaped inside it, and `]]>` split across two sections. */
function cdata(value: string | null | undefined, limit: number): string {
  if (!value) return ''
  const text = limitCharacters(removeIllegalXmlCharacters(value), limit)
  return `<![CDATA[${text.includes(']]>') ? text.replaceAll(']]>', ']]]]><![CDATA[>') : text}]]>`
}

const element = (name: string, content: string) => `<${name}>${content}</${name}>`
const textElement = (name: string, value: string | null | undefined, limit: number) => element(name, cdata(value, limit))

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

function itemXml(item: ExportLineItem, settings: DocumentSettings): string {
  const { weight, unit } = weightOf(item)
  let options = ''
  let optionCount = 0
  for (const name in item.options) {
    if (optionCount++ === MAX_OPTIONS) break
    options += element('Option', textElement('Name', name, 100) + textElement('Value', String(item.options[name] ?? ''), 100))
  }
  return element(
    'Item',
    textElement('SKU', item.sku, 100) +
      textElement('Name', item.name, 200) +
      element('Weight', weight) +
      element('Quantity', String(Math.trunc(item.quantity))) +
      element('UnitPrice', decimal(item.unitPrice)) +
      textElement('ImageUrl', absoluteUrl(item.imageUrl, settings.siteUrl), 2000) +
      textElement('WeightUnits', unit, 20) +
      element('Adjustment', 'false') +
      element('Options', options),
  )
}

/** The order's discount as ShipStation's adjustment line, named after its coupon. */
function discountXml(order: ExportOrder): string {
  const amount = Number(order.discount)
  if (!Number.isFinite(amount) || amount === 0) return ''
  return element(
    'Item',
    textElement('SKU', '', 100) +
      textElement('Name', order.couponCode?.trim() || 'Discount', 200) +
      element('Weight', '0') +
      element('Quantity', '1') +
      element('UnitPrice', decimal(amount > 0 ? `-${order.discount.trim()}` : order.discount)) +
      textElement('ImageUrl', '', 2000) +
      textElement('WeightUnits', '', 20) +
      element('Adjustment', 'true') +
      element('Options', ''),
  )
}

const country = (address: ExportAddress) => (address.country ?? '').trim().toUpperCase()

function billToXml(address: ExportAddress | null, email: string | null): string {
  const a = address ?? ({} as Partial<ExportAddress>)
  return element(
    'BillTo',
    textElement('Name', a.name, 100) +
      textElement('Address1', a.address1, 200) +
      textElement('City', a.city, 100) +
      textElement('State', a.state, 100) +
      textElement('PostalCode', a.postalCode, 50) +
      textElement('Country', address ? country(address) : '', 2) +
      textElement('Phone', a.phone, 50) +
      textElement('Email', a.email || email, 100),
  )
}

function shipToXml(address: ExportAddress | null): string {
  const a = address ?? ({} as Partial<ExportAddress>)
  return element(
    'ShipTo',
    textElement('Name', a.name, 100) +
      textElement('Company', a.company, 100) +
      textElement('Address1', a.address1, 200) +
      textElement('Address2', a.address2, 200) +
      textElement('City', a.city, 100) +
      textElement('State', a.state, 100) +
      textElement('PostalCode', a.postalCode, 50) +
      textElement('Country', address ? country(address) : '', 2) +
      textElement('Phone', a.phone, 50),
  )
}

function orderXml(order: ExportOrder, settings: DocumentSettings): string {
  let items = ''
  for (const item of order.items) items += itemXml(item, settings)
  items += discountXml(order)
  const lastModified = formatPlatformDate(order.dateUpdated.getTime(), settings.timeZone)
  return element(
    'Order',
    element('OrderID', String(order.id)) +
      textElement('OrderNumber', order.reference, 50) +
      textElement('OrderStatus', order.statusHandle, 50) +
      element('OrderTotal', decimal(order.total)) +
      element('TaxAmount', decimal(order.tax)) +
      element('ShippingAmount', decimal(order.shipping)) +
      element('LastModified', lastModified) +
      textElement('PaymentMethod', order.paymentMethod, 50) +
      textElement('ShippingMethod', order.shippingMethod, 100) +
      element('Items', items) +
      element(
        'Customer',
        textElement('CustomerCode', order.customerCode, 100) +
          // BillTo/Name is required: without a billing address the shipping address is billed.
          billToXml(order.billingAddress ?? order.shippingAddress, order.email) +
          shipToXml(order.shippingAddress),
      ) +
      textElement('InternalNotes', order.internalNotes, 1000) +
      element('Gift', order.isGift ? 'true' : 'false') +
      element('OrderDate', order.dateOrdered ? formatPlatformDate(order.dateOrdered.getTime(), settings.timeZone) : lastModified) +
      textElement('CustomField1', order.customFields[0], 100) +
      textElement('CustomField2', order.customFields[1], 100) +
      textElement('CustomField3', order.customFields[2], 100) +
      textElement('CustomerNotes', order.customerNotes, 1000) +
      textElement('GiftMessage', order.giftMessage, 1000),
  )
}

/** The whole export document: `<Orders pages="N">` and one `<Order>` per order, in the given order. */
export function renderExportDocument(orders: readonly ExportOrder[], pages: number, settings: DocumentSettings): string {
  let xml = `<?xml version="1.0" encoding="utf-8"?>\n<Orders pages="${pages}">`
  for (const order of orders) xml += orderXml(order, settings)
  return xml + '</Orders>'
}
