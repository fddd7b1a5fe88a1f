// The label batch screens' routes: a batch made from the shipment list (the selected, or all the filter
// matches), the list of batches, a batch's progress, its retry and cancel. Under the label permission.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { BatchErrors } from '../errors.js'
import type { LabelBatchFilter, LabelBatchSelection } from '../batches/service.js'
import type { LabelFormat } from '../gateway/delivery-provider.js'
import { isShipmentStatus } from '../model/shipment.js'
import { batchListPage, batchPage } from './batch-pages.js'
import { notice } from './components.js'
import { MAX_PRINT_JOB_PARCELS } from '../documents/print-job.js'
import { html } from '../html.js'
import { AdminBadRequest, adminUserId, formSchema, hide, positiveId, refusalOf, routePermissions, text, type AdminScreen, type Form } from './screen.js'

const NOTICES: Record<string, string> = {
  created: 'Batch created: its labels are being bought.',
  retried: 'The failed parcels are queued again.',
  cancelled: 'The parcels not started are cancelled.',
}

/** The most items the progress page lists (the failed and skipped are listed apart, all of them up to this too). */
const ITEMS_SHOWN = 200

export function registerBatchRoutes(screen: AdminScreen) {
  const { scope, options, prefix, context, sendPage } = screen
  const { buyLabels } = routePermissions
  const batchId = (raw: string) => positiveId(raw, () => new BatchErrors.BatchNotFound(raw))
  const flashOf = (request: FastifyRequest) => NOTICES[text((request.query as Record<string, unknown>).notice)] ?? null

  /** A refusal the admin can act on, as a page with a way back; anything else is the error handler's. */
  async function refused(request: FastifyRequest, reply: FastifyReply, error: unknown, back: string) {
    const message = refusalOf(error)
    if (message === null) throw error
    return sendPage(request, reply, 'Request refused', html`<h1>Request refused</h1>${notice('error', message)}<p><a href="${back}">Back</a></p>`, 422)
  }

  /** The shipment list's filter as the list resolves it (the order by reference or id). */
  async function filterOf(body: Form): Promise<LabelBatchFilter> {
    const status = text(body.filterStatus)
    if (status !== '' && !isShipmentStatus(status)) throw AdminBadRequest(`"${status}" is not a shipment status.`)
    const order = text(body.filterOrder).trim()
    let orderId: number | undefined
    if (order) {
      const found = (await options.orders.findOrderByReference(order)) ?? (/^[1-9]\d{0,9}$/.test(order) ? await options.orders.findOrder(Number(order)) : undefined)
      if (!found) throw AdminBadRequest(`No order matches “${order}”.`)
      orderId = found.id
    }
    const q = text(body.filterQ).trim()
    return { status: status === '' ? undefined : (status as LabelBatchFilter['status']), orderId, search: q || undefined }
  }

  scope.post<{ Body: Form }>('/label-batches', { schema: formSchema, config: buyLabels }, async (request, reply) => {
    const body = request.body
    let selection: LabelBatchSelection
    if (text(body.scope) === 'filter') selection = { filter: await filterOf(body) }
    else {
      const ids = [...new Set((Array.isArray(body.ids) ? body.ids : [body.ids ?? '']).filter((id) => /^[1-9]\d{0,9}$/.test(id)).map(Number))]
      if (ids.length === 0) throw AdminBadRequest('Select at least one shipment, or buy labels for all that match the filter.')
      selection = { shipmentIds: ids }
    }
    const format = text(body.labelFormat) || 'PDF'
    try {
      const batch = await options.batches.create(selection, { suggestParcels: text(body.suggestParcels) === '1', labelFormat: format as LabelFormat }, { userId: adminUserId(request) })
      return reply.redirect(`${prefix}/label-batches/${batch.id}?notice=created`, 303)
    } catch (error) {
      return refused(request, reply, error, `${prefix}/shipments`)
    }
  })

  scope.get('/label-batches', { schema: hide, config: buyLabels }, async (request, reply) => {
    const raw = text((request.query as Record<string, unknown>).beforeId)
    const page = await options.batches.list({ beforeId: /^[1-9]\d{0,9}$/.test(raw) ? Number(raw) : undefined, perPage: 50 })
    return sendPage(request, reply, 'Label batches', batchListPage(context(request, reply), { ...page, flash: flashOf(request) }))
  })

  scope.get<{ Params: { id: string } }>('/label-batches/:id', { schema: hide, config: buyLabels }, async (request, reply) => {
    const id = batchId(request.params.id)
    const [first, failed, skipped] = await Promise.all([
      options.batches.get(id, { perPage: ITEMS_SHOWN }),
      options.batches.get(id, { state: 'failed', perPage: ITEMS_SHOWN }),
      options.batches.get(id, { state: 'skipped', perPage: ITEMS_SHOWN }),
    ])
    const problems = [...failed.items, ...skipped.items].sort((a, b) => a.position - b.position || a.id - b.id)
    const data = { batch: first.batch, items: first.items, moreItems: first.nextCursor !== null, problems, flash: flashOf(request) }
    return sendPage(request, reply, `Label batch ${id}`, batchPage(context(request, reply), data))
  })

  // The batch's print job: its labels in pick order as one PDF (with packing slips and a pick list when
  // ticked) or one ZPL file. A GET form: printing changes nothing.
  scope.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>('/label-batches/:id/print', { schema: hide, config: buyLabels }, async (request, reply) => {
    const id = batchId(request.params.id)
    const format = text(request.query.format) === 'zpl' ? 'zpl' : 'pdf'
    let bytes: Buffer
    try {
      const parcels = await options.batches.boughtParcels(id, MAX_PRINT_JOB_PARCELS)
      const include = format === 'pdf' ? { slips: text(request.query.slips) === 'yes', pickList: text(request.query.pickList) === 'yes' } : undefined
      bytes = await options.documents.printJob(parcels, { format, ...(include && { include }) })
    } catch (error) {
      return refused(request, reply, error, `${prefix}/label-batches/${id}`)
    }
    const disposition = format === 'pdf' ? `inline; filename="label-batch-${id}.pdf"` : `attachment; filename="label-batch-${id}.zpl"`
    return reply
      .header('content-type', format === 'pdf' ? 'application/pdf' : 'text/plain; charset=us-ascii')
      .header('content-disposition', disposition)
      .header('cache-control', 'private, no-store')
      .send(bytes)
  })

  for (const action of ['retry', 'cancel'] as const) {
    scope.post<{ Params: { id: string }; Body: Form }>(`/label-batches/:id/${action}`, { schema: formSchema, config: buyLabels }, async (request, reply) => {
      const id = batchId(request.params.id)
      try {
        await options.batches[action](id)
      } catch (error) {
        return refused(request, reply, error, `${prefix}/label-batches/${id}`)
      }
      return reply.redirect(`${prefix}/label-batches/${id}?notice=${action === 'retry' ? 'retried' : 'cancelled'}`, 303)
    })
  }
}
