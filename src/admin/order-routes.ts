// The order page's routes (an order's shipments, the line-item staging form, its returns) and the attention list.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ShipmentsErrors, ShipmentValidationError } from '../errors.js'
import type { AllocatedLine } from '../shipments/attention.js'
import { BUILT_IN_SPLIT_RULES, type SplitRule } from '../model/items.js'
import { html } from '../html.js'
import type { FieldErrors } from './components.js'
import { orderDetails, orderPanel } from './shipment-pages.js'
import { orderReturnsSection } from './return-pages.js'
import { attentionPage, readItemQuantities, suggestByRule, type StagingState } from './line-item-pages.js'
import { AdminBadRequest, formSchema, hide, positiveId, routePermissions, text, type AdminScreen, type Form } from './screen.js'

export function registerOrderRoutes(screen: AdminScreen) {
  const { scope, options, prefix, context, sendPage, noticeOf, storeHasLines } = screen
  const { shipments, timeZone, splitRules } = options
  const { view, edit } = routePermissions

  const ruleNames = [...Object.keys(BUILT_IN_SPLIT_RULES), ...Object.keys(splitRules)]
  /** A split rule by name, the host's or a built-in one; own keys only (a rule named `constructor` is no rule). */
  const splitRuleNamed = (name: string): SplitRule | undefined =>
    Object.hasOwn(splitRules, name) ? splitRules[name] : Object.hasOwn(BUILT_IN_SPLIT_RULES, name) ? BUILT_IN_SPLIT_RULES[name as keyof typeof BUILT_IN_SPLIT_RULES] : undefined

  interface OrderPanelState {
    errors?: FieldErrors
    count?: string
    /** The staging form's rule (default `remaining`) and, after a refusal, what was typed. */
    rule?: string
    values?: Record<string, string>
  }

  async function orderPanelFor(request: FastifyRequest, reply: FastifyReply, rawId: string, state: OrderPanelState = {}) {
    const orderId = positiveId(rawId, () => new ShipmentsErrors.OrderNotFound(rawId))
    const { order, lines } = await shipments.allocation(orderId)
    const page = await shipments.list({ orderId, perPage: 100 })
    const errors = state.errors ?? {}
    const panel = orderPanel(context(request, reply), order, page.shipments, {
      errors,
      count: state.count ?? '1',
      flash: noticeOf(request),
      lines: lines && lines.length > 0 ? { lines, staging: staging(request, order, lines, state.rule, state.values, errors) } : null,
    })
    return { order, panel }
  }

  /** The staging form: the rule's suggestion, or what was typed when the service refused it. */
  function staging(
    request: FastifyRequest,
    order: { id: number; reference: string; statusHandle: string | null; isCompleted: boolean },
    lines: AllocatedLine[],
    requested: string | undefined,
    typed: Record<string, string> | undefined,
    errors: FieldErrors,
  ): StagingState {
    // A rule that is not offered (a tampered form) falls back to the default; the service's refusal already says why.
    const rule = requested !== undefined && splitRuleNamed(requested) ? requested : 'remaining'
    let suggestion = { values: {} as Record<string, string>, shipmentsByRule: 0 }
    const shown = { ...errors }
    try {
      suggestion = suggestByRule(splitRuleNamed(rule)!, lines, order)
    } catch (error) {
      // A host rule that throws or answers nonsense: the form stays usable, typed by hand.
      if (!(error instanceof ShipmentValidationError)) request.log.error({ err: error, rule }, 'A split rule failed while pre-filling the admin staging form')
      shown.rule = [...(shown.rule ?? []), `The split rule "${rule}" could not suggest quantities${error instanceof ShipmentValidationError ? `: ${Object.values(error.errors).flat().join(' ')}` : '; the log has the details.'}`]
    }
    return { rule, ruleNames, values: typed ?? suggestion.values, shipmentsByRule: suggestion.shipmentsByRule, errors: shown }
  }

  const sendOrderPage = async (request: FastifyRequest, reply: FastifyReply, state: OrderPanelState = {}, status = 200) => {
    const { order, panel } = await orderPanelFor(request, reply, (request.params as { orderId: string }).orderId, state)
    // No form in the section: no second CSRF token (a second one would replace the first's secret cookie).
    const sectionContext = { prefix, csrf: '', can: request.shipmentsAdmin!.can, timeZone }
    const returnsSection = orderReturnsSection(sectionContext, await options.returns.returnable(order.id), await options.returns.ofOrder(order.id))
    return sendPage(request, reply, `Order ${order.reference}`, html`<h1>Order ${order.reference}</h1>${orderDetails(order)}${panel}${returnsSection}`, status)
  }

  /** The rule a page is asked to pre-fill by; one that is not offered is a 400, as an unknown status filter is. */
  const ruleQuery = (request: FastifyRequest) => {
    const rule = text((request.query as Record<string, unknown>).rule)
    if (rule !== '' && !splitRuleNamed(rule)) throw AdminBadRequest(`No split rule "${rule}".`)
    return rule || undefined
  }

  scope.get<{ Params: { orderId: string } }>('/orders/:orderId', { schema: hide, config: view }, async (request, reply) =>
    sendOrderPage(request, reply, { rule: ruleQuery(request) }),
  )

  // The same panel without any layout, for a host to place on its own order screen.
  scope.get<{ Params: { orderId: string } }>('/orders/:orderId/panel', { schema: hide, config: view }, async (request, reply) => {
    const { panel } = await orderPanelFor(request, reply, request.params.orderId, { rule: ruleQuery(request) })
    return reply.type('text/html; charset=utf-8').send(panel.value)
  })

  // "Create N shipments" (order-level), or the staging form: the typed quantities (`action=items`) or the rule (`action=rule`).
  scope.post<{ Params: { orderId: string }; Body: Form }>('/orders/:orderId/shipments', { schema: formSchema, config: edit }, async (request, reply) => {
    const action = text(request.body.action)
    if (action === 'items' || action === 'rule') return createStaged(request, reply, action)
    const raw = text(request.body.count).trim()
    const count = /^\d{1,3}$/.test(raw) ? Number(raw) : Number.NaN
    if (!(count >= 1 && count <= 100)) return sendOrderPage(request, reply, { errors: { count: ['Enter a number of shipments from 1 to 100.'] }, count: raw }, 422)
    const orderId = positiveId(request.params.orderId, () => new ShipmentsErrors.OrderNotFound(request.params.orderId))
    await shipments.create(orderId, { count, userId: String(request.shipmentsAdmin!.user.id) })
    return reply.redirect(`${prefix}/orders/${orderId}?notice=created`, 303)
  })

  async function createStaged(request: FastifyRequest<{ Params: { orderId: string }; Body: Form }>, reply: FastifyReply, action: 'items' | 'rule') {
    const orderId = positiveId(request.params.orderId, () => new ShipmentsErrors.OrderNotFound(request.params.orderId))
    const lines = (await shipments.allocation(orderId)).lines ?? []
    const rule = text(request.body.rule) || 'remaining'
    const { values, items, errors } = readItemQuantities(request.body, lines.filter((line) => line.shippable).map((line) => line.id))
    const refuse = (refusal: FieldErrors) => sendOrderPage(request, reply, { rule, values, errors: refusal }, 422)
    if (action === 'items') {
      if (Object.keys(errors).length > 0) return refuse(errors)
      // No quantities would make a whole-order shipment: not what a staging form that lists lines means.
      if (items.length === 0) return refuse({ items: ['Enter a quantity for at least one line.'] })
    }
    let created: unknown[]
    try {
      const userId = String(request.shipmentsAdmin!.user.id)
      created = await shipments.create(orderId, action === 'items' ? { items, userId } : { rule, userId })
    } catch (error) {
      if (error instanceof ShipmentValidationError) return refuse(error.errors)
      throw error
    }
    return reply.redirect(`${prefix}/orders/${orderId}?notice=${created.length > 0 ? 'created' : 'nothingLeft'}`, 303)
  }

  // --- The attention list -------------------------------------------------------------------------

  scope.get('/attention', { schema: hide, config: view }, async (request, reply) => {
    const raw = text((request.query as Record<string, unknown>).page)
    const pageNumber = /^\d{1,9}$/.test(raw) ? Math.max(1, Number(raw)) : 1
    const page = await shipments.attention({ page: pageNumber, perPage: 50 })
    return sendPage(request, reply, 'Orders needing attention', attentionPage(context(request, reply), page, storeHasLines))
  })
}
