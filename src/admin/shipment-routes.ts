// The shipments screens' routes: the list (filters, bulk status, print buttons) and a shipment's page with
// its forms (fields, status, items, delete and restore, the tracking link). The page's parcel forms are
// parcel-routes.ts, which renders this page through renderShipment.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import type { AllocatedLine } from '../shipments/attention.js'
import { isShipmentStatus, type ShipmentStatus } from '../model/shipment.js'
import type { RateQuote } from '../deliveries/service.js'
import type { ParcelSuggestion } from '../deliveries/boxes.js'
import type { ShipmentExplanation } from '../rules/explain.js'
import { STATUS_LABELS, type FieldErrors, type PageContext } from './components.js'
import { parcelsSection } from './parcel-pages.js'
import { rulesPanel } from './rules-pages.js'
import { addressPanelOf } from './address-pages.js'
import { trackingLinkSection } from './notification-pages.js'
import { itemEditorLines, readItemQuantities, shipmentItemValues } from './line-item-pages.js'
import {
  formFieldErrors,
  readShipmentForm,
  shipmentFormValues,
  shipmentListPage,
  shipmentPage,
  type BulkOutcome,
  type ShipmentListFilters,
} from './shipment-pages.js'
import { loadCustomsSection, type CustomsFormState } from './customs-pages.js'
import { AdminBadRequest, AdminNotFound, formSchema, hide, routePermissions, shipmentId, text, type AdminScreen, type Form } from './screen.js'

/** Renders a shipment's page, with a refused form's values and errors: the parcel forms answer with it too. */
export type RenderShipment = ReturnType<typeof registerShipmentRoutes>['renderShipment']
export function registerShipmentRoutes(screen: AdminScreen) {
  const { scope } = screen
  const { view } = routePermissions
  const renderer = createShipmentPageRenderer(screen)
  const { renderShipment } = renderer

  registerShipmentListRoutes(screen)

  scope.get<{ Params: { id: string } }>('/shipments/:id', { schema: hide, config: view }, async (request, reply) =>
    renderShipment(request, reply, shipmentId(request.params.id)),
  )

  registerShipmentPrintRoutes(screen)
  registerShipmentFormRoutes(screen, renderer)
  return { renderShipment }
}

/** A shipment's page, with a refused form's values and errors, and the order lines its items editor shows. */
function createShipmentPageRenderer(screen: AdminScreen) {
  const { options, context, sendPage, noticeOf, orderReferencesOf } = screen
  const { admin, shipments, integrations, timeZone, shipmentFields, trackingLinks } = options

  /** Display names of these users (`admin.userName`); one that fails (logged) or answers null keeps its id. */
  async function userNamesOf(request: FastifyRequest, userIds: Iterable<string>): Promise<Map<string, string>> {
    const names = new Map<string, string>()
    const userName = admin.userName
    if (!userName) return names
    await Promise.all(
      [...new Set(userIds)].map(async (userId) => {
        try {
          const name = await userName(userId)
          if (typeof name === 'string' && name.trim() !== '') names.set(userId, name)
        } catch (error) {
          request.log.error({ err: error, userId }, 'admin.userName failed; the history shows the user id')
        }
      }),
    )
    return names
  }

  async function renderShipment(
    request: FastifyRequest,
    reply: FastifyReply,
    id: number,
    state: {
      values?: Record<string, string>
      errors?: FieldErrors
      transitionErrors?: FieldErrors
      itemValues?: Record<string, string>
      itemErrors?: FieldErrors
      parcelErrors?: FieldErrors
      parcelValues?: Record<string, string>
      quotes?: { parcelId: number; quotes: RateQuote[] }
      /** The parcels just suggested from the boxes, shown with their "Accept" form. */
      suggestion?: ParcelSuggestion
      /** The dry run rated by "Rate by the rules"; without it the page runs it unrated. */
      rulesExplanation?: ShipmentExplanation
      /** A refusal of the address panel's last button (address-routes.ts). */
      addressProblem?: string
      /** A customs declaration's form as sent, with its problems (customs-routes.ts). */
      customs?: CustomsFormState
      status?: number
    } = {},
  ) {
    const shipment = await shipments.get(id)
    if (!shipment) throw new ShipmentsErrors.ShipmentNotFound(id)
    const [history, checkpoints, references, lines, orderReferences] = await Promise.all([
      shipments.history(id),
      shipments.checkpoints(id),
      integrations.externalReferences(id),
      orderLinesOf(shipment.orderId),
      orderReferencesOf(request, [shipment.orderId]),
    ])
    const userNames = await userNamesOf(request, history.flatMap((entry) => (entry.userId ? [entry.userId] : [])))
    const editorLines = lines || shipment.items.length > 0 ? itemEditorLines(lines ?? [], shipment) : null
    // One context per page: on a first visit each token made would come with a new secret, and only the last one's cookie is kept.
    const pageContext = context(request, reply)
    const content = shipmentPage(pageContext, {
      shipment,
      history,
      checkpoints,
      references,
      fields: shipmentFields,
      values: state.values ?? shipmentFormValues(shipment, shipmentFields, timeZone),
      errors: state.errors ?? {},
      transitionErrors: state.transitionErrors ?? {},
      items: editorLines
        ? { lines: editorLines, values: state.itemValues ?? shipmentItemValues(editorLines, shipment), errors: state.itemErrors ?? {} }
        : null,
      flash: noticeOf(request),
      trackingLink: trackingLinks ? trackingLinkSection(pageContext, shipment, await trackingLinks.url(id)) : null,
      orderReference: orderReferences.get(shipment.orderId) ?? null,
      userNames,
      parcels: parcelsSection(pageContext, {
        shipmentId: id,
        parcels: shipment.parcels,
        labelIntegrations: (await integrations.list())
          .filter((integration) => integrations.isEnabled(integration) && options.providers.get(integration.providerId ?? '')?.deliveries)
          .map((integration) => integration.handle),
        quotes: state.quotes ?? null,
        suggestion: state.suggestion ?? null,
        errors: state.parcelErrors ?? {},
        values: state.parcelValues ?? {},
      }),
      rulesPanel: await rulesPanelOf(request, pageContext, id, state.rulesExplanation),
      addressPanel: await addressPanelOf(options, request, pageContext, id, state.addressProblem),
      customs: await loadCustomsSection(options.customs, pageContext, shipment, state.customs ?? null, (error) => request.log.error({ err: error, shipmentId: id }, 'The customs section of the shipment page failed')),
    })
    return sendPage(request, reply, `Shipment ${shipment.reference}`, content, state.status)
  }

  /** The "Which rule and why" panel; a dry run that fails (an order the store no longer knows) costs the panel, never the page. */
  async function rulesPanelOf(request: FastifyRequest, pageContext: PageContext, id: number, rated: ShipmentExplanation | undefined) {
    try {
      return rulesPanel(pageContext, id, rated ?? (await options.rules.explain(id)))
    } catch (error) {
      request.log.error({ err: error, shipmentId: id }, 'The shipping rules dry run for the shipment page failed')
      return rulesPanel(pageContext, id, null, 'The shipping rules could not be applied to this shipment now.')
    }
  }

  /** An order's lines with their allocation; null when the order store gives none (or the order is gone). */
  async function orderLinesOf(orderId: number): Promise<AllocatedLine[] | null> {
    try {
      const { lines } = await shipments.allocation(orderId)
      return lines && lines.length > 0 ? lines : null
    } catch (error) {
      if ((error as { code?: string }).code === 'SHIPMENTS_ORDER_NOT_FOUND') return null
      throw error
    }
  }
  return { renderShipment, orderLinesOf }
}

/** The list: its filters and pages, and the bulk status change of the selected shipments. */
function registerShipmentListRoutes(screen: AdminScreen) {
  const { scope, context, sendPage, orderReferencesOf } = screen
  const { shipments, orders } = screen.options
  const { view, transition } = routePermissions

  async function renderList(request: FastifyRequest, reply: FastifyReply, query: Record<string, unknown>, bulk?: BulkOutcome[], status = 200) {
    const statusFilter = text(query.status)
    if (statusFilter !== '' && !isShipmentStatus(statusFilter)) throw AdminBadRequest(`"${statusFilter}" is not a shipment status.`)
    const filters: ShipmentListFilters = { status: statusFilter as ShipmentStatus | '', order: text(query.order).trim(), q: text(query.q).trim() }
    const pageNumber = /^\d{1,9}$/.test(text(query.page)) ? Math.max(1, Number(text(query.page))) : 1
    let orderId: number | undefined
    let orderNotFound = false
    if (filters.order) {
      const order = (await orders.findOrderByReference(filters.order)) ?? (/^[1-9]\d{0,9}$/.test(filters.order) ? await orders.findOrder(Number(filters.order)) : undefined)
      if (order) orderId = order.id
      else orderNotFound = true
    }
    const page = orderNotFound
      ? { shipments: [], total: 0, page: 1, perPage: 50 }
      : await shipments.list({
          status: filters.status || undefined,
          orderId,
          search: filters.q || undefined,
          page: pageNumber,
          afterId: /^\d{1,10}$/.test(text(query.after)) ? Number(text(query.after)) : undefined,
          perPage: 50,
        })
    const orderReferences = await orderReferencesOf(request, page.shipments.map((shipment) => shipment.orderId))
    return sendPage(request, reply, 'Shipments', shipmentListPage(context(request, reply), page, filters, { orderNotFound, bulk, orderReferences }), status)
  }

  scope.get('/shipments', { schema: hide, config: view }, async (request, reply) => renderList(request, reply, request.query as Record<string, unknown>))

  scope.post<{ Body: Form }>('/shipments/bulk-status', { schema: formSchema, config: transition }, async (request, reply) => {
    const target = text(request.body.status)
    const ids = [...new Set((Array.isArray(request.body.ids) ? request.body.ids : [request.body.ids ?? '']).filter((id) => /^[1-9]\d{0,15}$/.test(id)).map(Number))]
    if (!isShipmentStatus(target)) throw AdminBadRequest('Choose the status to change the selected shipments to.')
    if (ids.length === 0) throw AdminBadRequest('Select at least one shipment.')
    if (ids.length > 100) throw AdminBadRequest('Change at most 100 shipments at a time.')
    const userId = String(request.shipmentsAdmin!.user.id)
    const statusMessage = text(request.body.statusMessage)
    const outcomes: BulkOutcome[] = []
    // One at a time: each change takes its shipment's mutex and writes its own history row and event.
    for (const id of ids) {
      try {
        const result = await shipments.update(id, { status: target, statusMessage: statusMessage || null }, { userId })
        outcomes.push(
          result.transition
            ? { id, reference: result.shipment.reference, outcome: 'moved', message: `moved from ${STATUS_LABELS[result.transition.from]} to ${STATUS_LABELS[target]}.` }
            : { id, reference: result.shipment.reference, outcome: 'unchanged', message: `already ${STATUS_LABELS[target]}.` },
        )
      } catch (error) {
        const shipment = await shipments.get(id)
        outcomes.push({ id, reference: shipment?.reference ?? null, outcome: 'refused', message: refusalText(error, request) })
      }
    }
    return renderList(request, reply, {}, outcomes)
  })

  /** What a refused change tells the admin: the service's own message; anything unexpected is logged. */
  function refusalText(error: unknown, request: FastifyRequest): string {
    if (error instanceof ShipmentValidationError) return Object.values(error.errors).flat().join(' ')
    if (error instanceof ShipmentUpdateRejectedError) return error.message
    const coded = error as { statusCode?: number; message?: string }
    if (coded.statusCode === 404 || coded.statusCode === 403) return coded.message ?? 'Refused.'
    request.log.error({ err: error }, 'Admin bulk status change failed for a shipment')
    return 'An internal error occurred.'
  }
}

/** The print buttons: a shipment's packing slip, and the list's documents of the selected shipments (PDF). */
function registerShipmentPrintRoutes(screen: AdminScreen) {
  const { scope, options } = screen
  const { view } = routePermissions

  /** A PDF to the browser, opened in its viewer; the name carries no text of the store's. */
  const sendPdf = (reply: FastifyReply, bytes: Buffer, name: string) =>
    reply.header('content-type', 'application/pdf').header('content-disposition', `inline; filename="${name}"`).header('cache-control', 'private, no-store').send(bytes)

  scope.get<{ Params: { id: string } }>('/shipments/:id/packing-slip', { schema: hide, config: view }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    return sendPdf(reply, await options.documents.packingSlip(id), `packing-slip-${id}.pdf`)
  })

  // The list's print buttons post the selected ids (a POST: the CSRF token never lands in a URL).
  const documentKinds = { 'pick-list': 'pickList', 'packing-slips': 'packingSlips', labels: 'labels' } as const
  scope.post<{ Params: { kind: string }; Body: Form }>('/shipments/documents/:kind', { schema: formSchema, config: view }, async (request, reply) => {
    const kind = Object.hasOwn(documentKinds, request.params.kind) ? documentKinds[request.params.kind as keyof typeof documentKinds] : null
    if (!kind) throw AdminBadRequest('Unknown document.')
    const raw = Array.isArray(request.body.ids) ? request.body.ids : [request.body.ids ?? '']
    const ids = [...new Set(raw.filter((id) => /^[1-9]\d{0,9}$/.test(id)).map(Number))]
    if (ids.length === 0) throw AdminBadRequest('Select at least one shipment.')
    if (ids.length > options.documents.maxBatchSize) throw AdminBadRequest(`Print at most ${options.documents.maxBatchSize} shipments at a time.`)
    return sendPdf(reply, await options.documents[kind](ids), `${request.params.kind}-${ids.length}-shipments.pdf`)
  })
}

/** The shipment page's forms: fields, status, items, delete and restore, the tracking link. */
function registerShipmentFormRoutes(screen: AdminScreen, renderer: ReturnType<typeof createShipmentPageRenderer>) {
  const { scope, prefix } = screen
  const { shipments, timeZone, shipmentFields, trackingLinks } = screen.options
  const { edit, transition } = routePermissions
  const { renderShipment, orderLinesOf } = renderer

  scope.post<{ Params: { id: string }; Body: Form }>('/shipments/:id', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const current = await shipments.get(id)
    if (!current) throw new ShipmentsErrors.ShipmentNotFound(id)
    const { submitted, update, errors } = readShipmentForm(request.body, shipmentFormValues(current, shipmentFields, timeZone), shipmentFields, timeZone)
    if (Object.keys(errors).length > 0) return renderShipment(request, reply, id, { values: submitted, errors, status: 422 })
    if (Object.keys(update).length === 0) return reply.redirect(`${prefix}/shipments/${id}?notice=unchanged`, 303)
    try {
      await shipments.update(id, update, { userId: String(request.shipmentsAdmin!.user.id) })
    } catch (error) {
      if (error instanceof ShipmentValidationError) return renderShipment(request, reply, id, { values: submitted, errors: formFieldErrors(error.errors), status: 422 })
      if (error instanceof ShipmentUpdateRejectedError) return renderShipment(request, reply, id, { values: submitted, errors: { form: [error.message] }, status: 422 })
      throw error
    }
    return reply.redirect(`${prefix}/shipments/${id}?notice=saved`, 303)
  })

  scope.post<{ Params: { id: string }; Body: Form }>('/shipments/:id/transition', { schema: formSchema, config: transition }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const target = text(request.body.status)
    if (target === '') return renderShipment(request, reply, id, { transitionErrors: { status: ['Choose the new status.'] }, status: 422 })
    let moved: boolean
    try {
      const result = await shipments.update(id, { status: target as ShipmentStatus, statusMessage: text(request.body.statusMessage) || null }, { userId: String(request.shipmentsAdmin!.user.id) })
      moved = result.transition !== null
    } catch (error) {
      if (error instanceof ShipmentValidationError) return renderShipment(request, reply, id, { transitionErrors: formFieldErrors(error.errors), status: 422 })
      if (error instanceof ShipmentUpdateRejectedError) return renderShipment(request, reply, id, { transitionErrors: { form: [error.message] }, status: 422 })
      throw error
    }
    return reply.redirect(`${prefix}/shipments/${id}?notice=${moved ? 'transitioned' : 'unchanged'}`, 303)
  })

  // The items editor: quantities per line of the order replace the shipment's items (0 removes a line).
  scope.post<{ Params: { id: string }; Body: Form }>('/shipments/:id/items', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const current = await shipments.get(id)
    if (!current) throw new ShipmentsErrors.ShipmentNotFound(id)
    const lines = itemEditorLines((await orderLinesOf(current.orderId)) ?? [], current)
    const shown = shipmentItemValues(lines, current)
    const { values, items, errors } = readItemQuantities(request.body, Object.keys(shown).map((name) => Number(name.slice('items.'.length))))
    if (Object.keys(errors).length > 0) return renderShipment(request, reply, id, { itemValues: values, itemErrors: errors, status: 422 })
    const held = new Map(current.items.map((item) => [item.lineItemId, item.quantity]))
    if (items.length === held.size && items.every((item) => held.get(item.lineItemId) === item.quantity)) {
      return reply.redirect(`${prefix}/shipments/${id}?notice=unchanged`, 303)
    }
    try {
      await shipments.update(id, { items }, { userId: String(request.shipmentsAdmin!.user.id) })
    } catch (error) {
      if (error instanceof ShipmentValidationError) return renderShipment(request, reply, id, { itemValues: values, itemErrors: error.errors, status: 422 })
      if (error instanceof ShipmentUpdateRejectedError) return renderShipment(request, reply, id, { itemValues: values, itemErrors: { form: [error.message] }, status: 422 })
      throw error
    }
    return reply.redirect(`${prefix}/shipments/${id}?notice=saved`, 303)
  })

  for (const [action, deleted] of [['delete', true], ['restore', false]] as const) {
    scope.post<{ Params: { id: string } }>(`/shipments/:id/${action}`, { schema: formSchema, config: edit }, async (request, reply) => {
      const id = shipmentId(request.params.id)
      await (deleted ? shipments.softDelete(id) : shipments.restore(id))
      return reply.redirect(`${prefix}/shipments/${id}?notice=${deleted ? 'deleted' : 'restored'}`, 303)
    })
  }

  // The public tracking link: revoking raises its version, so every link given out before answers 404.
  scope.post<{ Params: { id: string } }>('/shipments/:id/tracking-link/revoke', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    if (!trackingLinks) throw AdminNotFound('Tracking link')
    if (!(await shipments.get(id))) throw new ShipmentsErrors.ShipmentNotFound(id)
    await trackingLinks.revoke(id)
    return reply.redirect(`${prefix}/shipments/${id}?notice=linkRevoked`, 303)
  })
}
