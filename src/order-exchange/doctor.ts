// ShipStation's connection doctor: plays ShipStation against a shop's public Custom Store URL as
// ShipStation does (Basic auth with the configured credentials, an export window written in UTC as
// `MM/dd/yyyy HH:mm`, page 1 and then every page to the last), checks each page against the limits of
// ShipStation's published order schema, and sends a ship notification as a dry run that changes nothing.
// Each step says what it found in a store admin's words and, when it failed, the fix. Used by the admin's
// ShipStation page and by `npx fastify-shipments doctor <url>`.
import type * as Saxes from 'saxes'
import { requireOnFirstUse } from '../lazy.js'

const saxes = requireOnFirstUse<typeof Saxes>('saxes for the connection doctor', 'saxes')

/** What ShipStation's requests say they are (connectors and firewalls see this user agent). */
export const DOCTOR_USER_AGENT = 'ShipStation (fastify-shipments connection doctor)'
/** A header the package's exchange answers with: its ship notifications take `dry_run=true`. */
export const DRY_RUN_HEADER = 'x-shipments-dry-run'
/** Where the package mounts the exchange unless `prefixes.orderExchange` says otherwise. */
const DEFAULT_EXCHANGE_PATH = '/actions/shippingplatformconnect/orders/process'
/** The page walk stops here: a window this large is a misconfiguration of its own. */
const MAX_PAGES = 1000

export type DoctorOutcome = 'pass' | 'warn' | 'fail' | 'skip'

export interface DoctorStep {
  step: 'reach' | 'credentials' | 'export' | 'pages' | 'orders' | 'shipnotify'
  outcome: DoctorOutcome
  /** What was found. */
  detail: string
  /** What to do about it, when it failed or warned. */
  fix: string | null
}

export interface DoctorReport {
  ok: boolean
  url: string
  steps: DoctorStep[]
}

export interface DoctorInput {
  /** The URL pasted into ShipStation (the exchange's `/process` route). */
  url: string
  username: string
  password: string
  /** How many days back the export window starts. Default 7. */
  days?: number | undefined
  /** The path the exchange is mounted at on this host, when known (the admin page knows it). */
  expectedPath?: string | undefined
  now?: number | undefined
  timeoutMs?: number | undefined
}

/** ShipStation's date parameter: UTC, `MM/dd/yyyy HH:mm`. */
export function shipStationDate(instant: number): string {
  const date = new Date(instant)
  const two = (value: number) => String(value).padStart(2, '0')
  return `${two(date.getUTCMonth() + 1)}/${two(date.getUTCDate())}/${date.getUTCFullYear()} ${two(date.getUTCHours())}:${two(date.getUTCMinutes())}`
}

/** An element as the doctor reads the export: its name, attributes, text and children. */
interface XmlElement {
  name: string
  attributes: Record<string, string>
  text: string
  children: XmlElement[]
}

/** The document's root element, or why it is not XML. */
function parseXml(xml: string): XmlElement | { problem: string } {
  const parser = new (saxes().SaxesParser)()
  const stack: XmlElement[] = []
  let root: XmlElement | null = null
  let problem: string | null = null
  parser.on('error', (error) => {
    problem ??= error.message
  })
  parser.on('opentag', (tag) => {
    const element: XmlElement = { name: tag.name, attributes: Object.fromEntries(Object.entries(tag.attributes).map(([key, value]) => [key, String(value)])), text: '', children: [] }
    if (stack.length > 0) stack[stack.length - 1]!.children.push(element)
    else root = element
    stack.push(element)
  })
  const addText = (text: string) => {
    if (stack.length > 0) stack[stack.length - 1]!.text += text
  }
  parser.on('text', addText)
  parser.on('cdata', addText)
  parser.on('closetag', () => void stack.pop())
  try {
    parser.write(xml).close()
  } catch (error) {
    problem ??= (error as Error).message
  }
  if (problem || !root) return { problem: problem ?? 'the document is empty' }
  return root
}

const childText = (element: XmlElement, name: string) => element.children.find((child) => child.name === name)?.text.trim() ?? null

/**
 * The limits of ShipStation's order schema (its published XSD, as its Custom Store documentation states
 * them): element lengths in characters, required elements, two-letter countries, dates and decimals.
 */
const ORDER_LIMITS: Array<[path: string, limit: number, required: boolean]> = [
  ['OrderID', 50, true],
  ['OrderNumber', 50, true],
  ['OrderStatus', 50, true],
  ['PaymentMethod', 50, false],
  ['ShippingMethod', 100, false],
  ['CustomerNotes', 1000, false],
  ['InternalNotes', 1000, false],
  ['GiftMessage', 1000, false],
  ['CustomField1', 100, false],
  ['CustomField2', 100, false],
  ['CustomField3', 100, false],
]
const ADDRESS_LIMITS: Array<[name: string, limit: number]> = [
  ['Name', 100],
  ['Company', 100],
  ['Address1', 200],
  ['Address2', 200],
  ['City', 100],
  ['State', 100],
  ['PostalCode', 50],
  ['Phone', 50],
]
const PLATFORM_DATE = /^\d{1,2}\/\d{1,2}\/\d{4} \d{2}:\d{2}$/
const DECIMAL = /^-?\d+(\.\d+)?$/
const WEIGHT_UNITS = /^(|pounds?|lbs?|grams?|gm|oz|ounces)$/i

/** What ShipStation would refuse in one exported order, field by field. */
export function orderProblems(order: XmlElement): string[] {
  const problems: string[] = []
  const check = (path: string, value: string | null, limit: number, required: boolean) => {
    if (value === null || value === '') {
      if (required) problems.push(`${path} is missing`)
    } else if ([...value].length > limit) problems.push(`${path} is ${[...value].length} characters (at most ${limit})`)
  }
  for (const [path, limit, required] of ORDER_LIMITS) check(path, childText(order, path), limit, required)
  for (const path of ['OrderDate', 'LastModified']) {
    const value = childText(order, path)
    if (!value || !PLATFORM_DATE.test(value)) problems.push(`${path} is not a date as M/D/YYYY HH:mm`)
  }
  for (const path of ['OrderTotal', 'TaxAmount', 'ShippingAmount']) {
    const value = childText(order, path)
    if (value && !DECIMAL.test(value)) problems.push(`${path} "${value}" is not a plain decimal`)
  }
  const customer = order.children.find((child) => child.name === 'Customer')
  for (const [party, required] of [['BillTo', ['Name']], ['ShipTo', ['Name', 'Address1', 'City', 'PostalCode', 'Country']]] as const) {
    const address = customer?.children.find((child) => child.name === party)
    if (!address) {
      problems.push(`Customer/${party} is missing`)
      continue
    }
    for (const [name, limit] of ADDRESS_LIMITS) check(`${party}/${name}`, childText(address, name), limit, (required as readonly string[]).includes(name))
    const country = childText(address, 'Country')
    if ((country !== null && country !== '') || (required as readonly string[]).includes('Country')) {
      if (!country || !/^[A-Za-z]{2}$/.test(country)) problems.push(`${party}/Country must be two letters`)
    }
  }
  const items = order.children.find((child) => child.name === 'Items')?.children.filter((child) => child.name === 'Item') ?? []
  items.forEach((item, index) => {
    const at = `Item ${index + 1}`
    check(`${at}/SKU`, childText(item, 'SKU'), 100, false)
    check(`${at}/Name`, childText(item, 'Name'), 200, true)
    if (!/^\d+$/.test(childText(item, 'Quantity') ?? '')) problems.push(`${at}/Quantity is not a whole number`)
    if (!DECIMAL.test(childText(item, 'UnitPrice') ?? '')) problems.push(`${at}/UnitPrice is not a plain decimal`)
    if (!WEIGHT_UNITS.test(childText(item, 'WeightUnits') ?? '')) problems.push(`${at}/WeightUnits "${childText(item, 'WeightUnits')}" is not one ShipStation reads`)
  })
  return problems
}

const step = (name: DoctorStep['step'], outcome: DoctorOutcome, detail: string, fix: string | null = null): DoctorStep => ({ step: name, outcome, detail, fix })

interface Exchange {
  status: number | null
  body: string
  headers: Headers | null
  /** Why no answer came (a refused connection, a timeout): its code, never a credential. */
  failure: string | null
}

function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`
}

/** Runs the doctor; never throws (a host that cannot be reached is a failed step). */
export async function runConnectionDoctor(input: DoctorInput): Promise<DoctorReport> {
  const now = input.now ?? Date.now()
  const timeoutMs = input.timeoutMs ?? 15_000
  const steps: DoctorStep[] = []
  const report = (): DoctorReport => ({ ok: steps.every((each) => each.outcome === 'pass' || each.outcome === 'skip' || each.outcome === 'warn'), url: input.url, steps })
  let base: URL
  try {
    base = new URL(input.url)
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error('not http')
  } catch {
    steps.push(step('reach', 'fail', 'The URL is not an http or https address.', `Paste the Custom Store URL, such as https://shop.example${DEFAULT_EXCHANGE_PATH}.`))
    return report()
  }

  async function call(query: Record<string, string>, options: { auth?: 'basic' | 'query' | 'none'; method?: 'GET' | 'POST'; body?: string } = {}): Promise<Exchange> {
    const url = new URL(base)
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value)
    if (options.auth === 'query') {
      url.searchParams.set('SS-UserName', input.username)
      url.searchParams.set('SS-Password', input.password)
    }
    const headers: Record<string, string> = { 'user-agent': DOCTOR_USER_AGENT, accept: 'text/xml, */*' }
    if ((options.auth ?? 'basic') === 'basic') headers.authorization = basic(input.username, input.password)
    if (options.body !== undefined) headers['content-type'] = 'application/xml; charset=utf-8'
    try {
      const response = await fetch(url, { method: options.method ?? 'GET', headers, body: options.body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) })
      return { status: response.status, body: await response.text(), headers: response.headers, failure: null }
    } catch (error) {
      const cause = (error as { cause?: { code?: unknown } }).cause
      const code = typeof cause?.code === 'string' ? cause.code : (error as Error).name
      return { status: null, body: '', headers: null, failure: code }
    }
  }

  // The window's end is the next whole minute: its bounds are exclusive and at whole minutes, so an end of
  // `now` written as HH:mm would leave out the orders changed in this minute (the ones just set up to try).
  const window = { action: 'export', start_date: shipStationDate(now - (input.days ?? 7) * 24 * 60 * 60 * 1000), end_date: shipStationDate(now + 60_000) }
  const pathHint = input.expectedPath ?? DEFAULT_EXCHANGE_PATH

  // 1. Reach it, without credentials: it must ask for them.
  const anonymous = await call({ ...window, page: '1' }, { auth: 'none' })
  if (anonymous.status === null) {
    steps.push(step('reach', 'fail', `No answer from ${base.host} (${anonymous.failure}).`, 'Check the address and that the host is reachable from the internet (ShipStation calls it from outside).'))
    return report()
  }
  if (anonymous.status === 404) {
    steps.push(step('reach', 'fail', `The URL answers 404: nothing is mounted at ${base.pathname}.`, `The exchange answers at ${pathHint} (the orderExchange prefix followed by /process): correct the path in ShipStation's Custom Store URL.`))
    return report()
  }
  if (anonymous.status >= 300 && anonymous.status < 400) {
    steps.push(step('reach', 'fail', `The URL answers ${anonymous.status}, a redirect to ${anonymous.headers?.get('location') ?? 'elsewhere'}; ShipStation does not follow redirects with its credentials.`, 'Paste the final address (https, the right host) into ShipStation.'))
    return report()
  }
  if (anonymous.status < 300) {
    steps.push(step('reach', 'fail', 'The export answers without credentials: anyone can read your orders.', 'Put the exchange route behind its Basic authentication (the package always asks for it; a proxy or another route answers here).'))
    return report()
  }
  steps.push(step('reach', anonymous.status === 401 ? 'pass' : 'warn', `${base.host} answers and asks for credentials (${anonymous.status}).`, anonymous.status === 401 ? null : 'A 401 was expected: check what answers at this URL.'))

  // 2. The credentials, as ShipStation sends them (Basic), then as query parameters to tell a stripped header apart.
  let page1 = await call({ ...window, page: '1' })
  if (page1.status === 401) {
    const byQuery = await call({ ...window, page: '1' }, { auth: 'query' })
    if (byQuery.status !== null && byQuery.status < 300) {
      steps.push(step('credentials', 'warn', 'The credentials are refused in the Authorization header but accepted as SS-UserName/SS-Password: something in front of the host strips the Authorization header.', 'Let the proxy pass the Authorization header (ShipStation sends Basic auth); or keep orderExchange.acceptQueryCredentials on and give ShipStation the credentials in the URL.'))
      page1 = byQuery
    } else {
      steps.push(step('credentials', 'fail', 'The username or password is refused (401).', "Enter in ShipStation exactly the username and password of the plugin's orderExchange option (its password is never shown on the admin pages: take it from where the host keeps it)."))
      return report()
    }
  } else if (page1.status === null || page1.status >= 400) {
    steps.push(step('credentials', 'fail', `With credentials the export answers ${page1.status ?? page1.failure}: ${excerpt(page1.body)}`, 'Read the host\'s log for this request (the activity log on the ShipStation page says why it was refused).'))
    return report()
  } else {
    steps.push(step('credentials', 'pass', 'The credentials are accepted (Basic authentication, as ShipStation sends them).'))
  }
  const auth: 'basic' | 'query' = steps.some((each) => each.step === 'credentials' && each.outcome === 'warn') ? 'query' : 'basic'

  // 3. The export document: XML with <Orders pages="N">.
  const first = parseXml(page1.body)
  if ('problem' in first || first.name !== 'Orders') {
    steps.push(step('export', 'fail', `Page 1 is not ShipStation's order export: ${'problem' in first ? first.problem : `its root element is <${first.name}>`}.`, 'The URL must be the exchange route itself, not a page of the shop.'))
    return report()
  }
  const pages = Number(first.attributes.pages ?? 'NaN')
  if (!Number.isInteger(pages) || pages < 0) {
    steps.push(step('export', 'fail', '<Orders> has no page count (its pages attribute).', 'Update the package: ShipStation reads the page count from page 1.'))
    return report()
  }
  steps.push(step('export', 'pass', `The export window of the last ${input.days ?? 7} days (${window.start_date} to ${window.end_date} UTC) has ${pages} page${pages === 1 ? '' : 's'}.`))

  // 4. Every page to the last, as ShipStation walks them.
  const orders: XmlElement[] = first.children.filter((child) => child.name === 'Order')
  let walked = 1
  for (let page = 2; page <= Math.min(pages, MAX_PAGES); page++) {
    const answer = await call({ ...window, page: String(page) }, { auth })
    const parsed = answer.status === 200 ? parseXml(answer.body) : null
    if (!parsed || 'problem' in parsed || parsed.name !== 'Orders') {
      steps.push(step('pages', 'fail', `Page ${page} of ${pages} answered ${answer.status ?? answer.failure}${parsed && 'problem' in parsed ? `, not XML: ${parsed.problem}` : ''}: ${excerpt(answer.body)}`, 'ShipStation stops importing at a page it cannot read: see the host\'s log and the activity log for this page.'))
      return report()
    }
    orders.push(...parsed.children.filter((child) => child.name === 'Order'))
    walked = page
  }
  steps.push(step('pages', pages > MAX_PAGES ? 'warn' : 'pass', `${walked} page${walked === 1 ? '' : 's'} read, ${orders.length} order${orders.length === 1 ? '' : 's'}.`, pages > MAX_PAGES ? `The walk stopped at ${MAX_PAGES} pages.` : null))

  // 5. Each order against ShipStation's schema.
  const refused = orders.map((order) => ({ reference: childText(order, 'OrderNumber') ?? '(no OrderNumber)', problems: orderProblems(order) })).filter((each) => each.problems.length > 0)
  steps.push(
    refused.length === 0
      ? step('orders', 'pass', `Every order fits ShipStation's order schema.`)
      : step('orders', 'fail', refused.slice(0, 20).map((each) => `Order ${each.reference}: ${each.problems.join('; ')}`).join('. ') + (refused.length > 20 ? `. And ${refused.length - 20} more.` : '.'), 'ShipStation refuses these orders: correct them in the shop (the fields named), then export again.'),
  )

  // 6. A ship notification as a dry run, on the first order: only where the host says it takes one.
  const reference = orders.length > 0 ? childText(orders[0]!, 'OrderNumber') : null
  if (!reference) {
    steps.push(step('shipnotify', 'skip', 'No order in the window to try a ship notification on.'))
  } else if (page1.headers?.get(DRY_RUN_HEADER) !== 'true') {
    steps.push(step('shipnotify', 'skip', 'The host does not say it takes a dry-run ship notification, so none was sent (a real one would ship the order).', 'Update the package on the host to check ship notifications too.'))
  } else {
    const notice = `<?xml version="1.0" encoding="utf-8"?><ShipNotice><OrderNumber>${escapeXml(reference)}</OrderNumber><Carrier>USPS</Carrier><Service></Service><TrackingNumber>DOCTOR-DRY-RUN</TrackingNumber></ShipNotice>`
    const answer = await call({ action: 'shipnotify', order_number: reference, carrier: 'USPS', service: '', tracking_number: 'DOCTOR-DRY-RUN', dry_run: 'true' }, { auth, method: 'POST', body: notice })
    steps.push(
      answer.status !== null && answer.status < 300
        ? step('shipnotify', 'pass', `A ship notification for order ${reference} would be applied (sent as a dry run: nothing changed).`)
        : step('shipnotify', 'fail', `A ship notification for order ${reference} would be refused (${answer.status ?? answer.failure}): ${excerpt(answer.body)}`, 'Check the orderExchange settings named in the answer (the shipped status, the tracking fields) on the ShipStation page.'),
    )
  }
  return report()
}

/** The start of an answer, as text, for a step's words (an HTML error page reads as its text). */
function excerpt(body: string): string {
  const text = body.replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim()
  return text.length > 200 ? `${text.slice(0, 200)}…` : text || '(empty)'
}

const escapeXml = (text: string) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`)
