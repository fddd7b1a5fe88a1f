// The returns screen's routes: the list by state and age, a return's page and its actions.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ReturnErrors, ShipmentsErrors, ShipmentValidationError } from '../errors.js'
import { RETURN_STATES, type ReturnState } from '../model/return.js'
import { ShipmentsPermissions } from '../shipments/routes.js'
import type { FieldErrors } from './components.js'
import { returnListPage, returnPage } from './return-pages.js'
import { AdminBadRequest, adminUserId, formSchema, hide, positiveId, refusalOf, routePermissions, text, type AdminScreen, type Form } from './screen.js'

export function registerReturnRoutes(screen: AdminScreen) {
  const { scope, options, prefix, context, sendPage, noticeOf } = screen
  const { integrations } = options
  const { view, buyLabels } = routePermissions

  // Returns: the list by state and age (paged by key), a return's page and its actions, all through the returns service.
  const returnsManager = { shipmentsAdminPermission: ShipmentsPermissions.manageReturns }
  const returnId = (raw: string) => positiveId(raw, () => new ReturnErrors.ReturnNotFound(raw))
  scope.get('/returns', { schema: hide, config: view }, async (request, reply) => {
    const query = request.query as Record<string, unknown>
    const state = text(query.state)
    if (state !== '' && !(RETURN_STATES as readonly string[]).includes(state)) throw AdminBadRequest(`No return state "${state}".`)
    const olderThanDays = text(query.olderThanDays).trim()
    if (olderThanDays !== '' && !/^\d{1,4}$/.test(olderThanDays)) throw AdminBadRequest('Days must be a whole number.')
    const beforeRaw = text(query.beforeId)
    const beforeId = /^[1-9]\d{0,9}$/.test(beforeRaw) ? Number(beforeRaw) : undefined
    const limit = 50
    const returns = await options.returns.list({
      state: (state || undefined) as ReturnState | undefined,
      createdBefore: olderThanDays === '' ? undefined : new Date(options.clock() - Number(olderThanDays) * 86_400_000),
      beforeId,
      limit,
    })
    const content = returnListPage(context(request, reply), { returns, state, olderThanDays, nextBeforeId: returns.length === limit ? returns[returns.length - 1]!.id : null, flash: noticeOf(request) })
    return sendPage(request, reply, 'Returns', content)
  })

  async function renderReturn(request: FastifyRequest, reply: FastifyReply, id: number, errors: FieldErrors = {}, status = 200) {
    const entry = await options.returns.get(id)
    if (!entry) throw new ReturnErrors.ReturnNotFound(id)
    const labelIntegrations = (await integrations.list())
      .filter((integration) => integrations.isEnabled(integration) && options.providers.get(integration.providerId ?? '')?.deliveries)
      .map((integration) => integration.handle)
    const content = returnPage(context(request, reply), { entry, history: await options.returns.history(id), labelIntegrations, errors, flash: noticeOf(request) })
    return sendPage(request, reply, `Return ${entry.reference}`, content, status)
  }
  scope.get<{ Params: { id: string } }>('/returns/:id', { schema: hide, config: view }, async (request, reply) => renderReturn(request, reply, returnId(request.params.id)))

  /**
   * Runs a return action; a refusal (422, 409) shows on the return's page, beside its form: beside the
   * form's field when `fields` names the form field of the service's field, else under `errorKey`.
   */
  async function returnAction(request: FastifyRequest, reply: FastifyReply, id: number, errorKey: string, action: () => Promise<unknown>, fields: Readonly<Record<string, string>> = {}) {
    try {
      await action()
    } catch (error) {
      if (error instanceof ShipmentValidationError) {
        const errors: FieldErrors = {}
        for (const [name, messages] of Object.entries(error.errors)) (errors[name === 'message' ? errorKey : name.startsWith('line') ? name : Object.hasOwn(fields, name) ? fields[name]! : errorKey] ??= []).push(...messages)
        return renderReturn(request, reply, id, errors, 422)
      }
      const refusal = refusalOf(error)
      if (refusal) return renderReturn(request, reply, id, { [errorKey]: [refusal] }, 422)
      throw error
    }
    return reply.redirect(`${prefix}/returns/${id}?notice=saved`, 303)
  }
  const returnContext = (request: FastifyRequest) => ({ userId: adminUserId(request), source: 'admin' })
  scope.post<{ Params: { id: string }; Body: Form }>('/returns/:id/state', { schema: formSchema, config: returnsManager }, async (request, reply) => {
    const id = returnId(request.params.id)
    const state = text(request.body.state)
    return returnAction(request, reply, id, state === 'rejected' ? 'message.rejected' : 'form', () =>
      options.returns.update(id, { state: state as ReturnState, message: text(request.body.message).trim() || null }, returnContext(request)),
    )
  })
  scope.post<{ Params: { id: string }; Body: Form }>('/returns/:id/tracking', { schema: formSchema, config: returnsManager }, async (request, reply) => {
    const id = returnId(request.params.id)
    return returnAction(request, reply, id, 'trackingNumber', () =>
      options.returns.update(id, { trackingNumber: text(request.body.trackingNumber).trim(), carrier: text(request.body.carrier).trim() || null }, returnContext(request)),
      { carrier: 'carrier' },
    )
  })
  scope.post<{ Params: { id: string }; Body: Form }>('/returns/:id/receive', { schema: formSchema, config: returnsManager }, async (request, reply) => {
    const id = returnId(request.params.id)
    const entry = await options.returns.get(id)
    if (!entry) throw new ReturnErrors.ReturnNotFound(id)
    const count = (name: string) => {
      const raw = text(request.body[name]).trim()
      return /^\d{1,9}$/.test(raw) ? Number(raw) : -1
    }
    const lines = entry.lines.map((line) => ({ lineItemId: line.lineItemId, resellable: count(`resellable.${line.lineItemId}`), damaged: count(`damaged.${line.lineItemId}`), missing: count(`missing.${line.lineItemId}`) }))
    return returnAction(request, reply, id, 'lines', () => options.returns.receive(id, { lines }, returnContext(request)))
  })
  scope.post<{ Params: { id: string }; Body: Form }>('/returns/:id/label/void', { schema: formSchema, config: buyLabels }, async (request, reply) => {
    const id = returnId(request.params.id)
    if (!request.shipmentsAdmin!.can.manageReturns) throw new ShipmentsErrors.Forbidden(ShipmentsPermissions.manageReturns)
    return returnAction(request, reply, id, 'void', () => options.returns.voidLabel(id, returnContext(request)))
  })
  scope.post<{ Params: { id: string }; Body: Form }>('/returns/:id/label', { schema: formSchema, config: buyLabels }, async (request, reply) => {
    const id = returnId(request.params.id)
    if (!request.shipmentsAdmin!.can.manageReturns) throw new ShipmentsErrors.Forbidden(ShipmentsPermissions.manageReturns)
    const body = request.body
    return returnAction(request, reply, id, 'label', () =>
      options.returns.buyLabel(
        id,
        { integration: text(body.integration), carrier: text(body.labelCarrier).trim(), service: text(body.service).trim(), weight: { value: text(body.weight).trim(), unit: text(body.weightUnit) } },
        returnContext(request),
      ),
      { integration: 'integration', carrier: 'labelCarrier', service: 'service', weight: 'weight', 'weight.value': 'weight', 'weight.unit': 'weightUnit' },
    )
  })
}
