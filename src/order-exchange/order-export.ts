// The export (spec 4.3): one page of the orders ShipStation asks for, in its date window and store, as
// the XML document it reads; an order that fails validation fails the page when the settings say so.
import { inSpan } from '../telemetry.js'
import { OrderExchangeErrors } from '../errors.js'
import { parsePlatformDate } from '../time.js'
import { renderExportDocument } from './export-document.js'
import type { OrderExchangeContext } from './exchange-context.js'

export interface ExportRequest {
  startDate?: string | undefined
  endDate?: string | undefined
  page?: string | undefined
  store?: string | undefined
  /** The origin of the request, for relative image URLs when no `siteUrl` is set. */
  origin: string
}

const MINUTE = 60_000

/** `page`: 1-based; below 1 or not a number is 1 (spec 4.3). */
export function pageParameter(raw: string | undefined): number {
  const digits = raw === undefined ? null : /^\s*\+?(\d+)(?:\.\d*)?\s*$/.exec(raw)
  const page = digits ? Number(digits[1]) : 1
  return page < 1 ? 1 : Math.min(page, Number.MAX_SAFE_INTEGER)
}

export function createOrderExport(shared: OrderExchangeContext) {
  const { settings, orderStore, logger, timeZone } = shared.deps

  /**
   * The date window of spec 4.3 rules 2 to 4: both dates or none, parsed in the site timezone, the
   * start floored to its minute and the end at second 59 of its minute, both exclusive.
   */
  function exportWindow(startDate: string | undefined, endDate: string | undefined) {
    if (!startDate?.trim() || !endDate?.trim()) return null
    const start = parsePlatformDate(startDate, timeZone)
    if (start === null) throw new OrderExchangeErrors.InvalidDate('start_date')
    const end = parsePlatformDate(endDate, timeZone)
    if (end === null) throw new OrderExchangeErrors.InvalidDate('end_date')
    return { after: Math.floor(start / MINUTE) * MINUTE, before: Math.floor(end / MINUTE) * MINUTE + 59_000 }
  }

  /** One page of the export document. */
  /** One page of the export, in its span (`shipments.exchange.export`). */
  function exportPage(request: ExportRequest): Promise<string> {
    return inSpan('shipments.exchange.export', { 'shipments.exchange.page': Number(request.page ?? 1) || 1 }, () => exportPageInSpan(request))
  }

  async function exportPageInSpan(request: ExportRequest): Promise<string> {
    return (await exportDocument(request)).xml
  }

  /** One page of the export document and how many orders it holds. */
  async function exportDocument(request: ExportRequest): Promise<{ xml: string; orders: number }> {
    if (!orderStore.exportOrders) throw new Error('The order store does not implement exportOrders().')
    const pageSize = settings.pageSize
    const storeValue = request.store?.trim()
    const { orders, total } = await orderStore.exportOrders({
      window: exportWindow(request.startDate, request.endDate),
      store: settings.storeField && storeValue ? { fieldHandle: settings.storeField, value: storeValue } : null,
      page: pageParameter(request.page),
      pageSize,
      includeInvalid: settings.failOnValidation,
    })
    const invalid = orders.filter((order) => order.problems.length > 0)
    if (invalid.length > 0) {
      logger.error(
        { orders: invalid.map((order) => ({ id: order.id, reference: order.reference, problems: order.problems })) },
        'ShipStation export failed: orders failed validation',
      )
      throw new OrderExchangeErrors.ExportFailed()
    }
    const xml = renderExportDocument(orders, Math.ceil(total / pageSize), { timeZone, siteUrl: settings.siteUrl ?? request.origin })
    return { xml, orders: orders.length }
  }

  return { exportPage, exportDocument }
}
