// The shipping rules screen's routes: the list and the default, a rule's form, the list's actions (each
// replaces the whole list through the rules service, so what it checks holds here too), and the shipment
// page's "Rate by the rules" button.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ShipmentValidationError } from '../errors.js'
import type { ShippingRule } from '../rules/model.js'
import type { ShippingRulesInput } from '../rules/validation.js'
import type { ShipmentExplanation } from '../rules/explain.js'
import type { FieldErrors } from './components.js'
import { html } from '../html.js'
import { addressSettingSectionOf } from './address-pages.js'
import { besideField, defaultValues, RULE_FIELDS, ruleFormPage, ruleValues, rulesListPage } from './rules-pages.js'
import type { RenderShipment } from './shipment-routes.js'
import { adminUserId, AdminNotFound, formSchema, hide, refusalOf, routePermissions, shipmentId, text, type AdminScreen, type Form } from './screen.js'

/** The service's field of a rule (`conditions.weight.min`...) as the form names it. */
const FORM_FIELD_OF: Readonly<Record<string, string>> = {
  name: 'name',
  integration: 'integration',
  'conditions.countries': 'countries',
  'conditions.weight': 'weightMin',
  'conditions.weight.min': 'weightMin',
  'conditions.weight.max': 'weightMax',
  'conditions.weight.unit': 'weightUnit',
  'conditions.parcelCount': 'parcelMin',
  'conditions.parcelCount.min': 'parcelMin',
  'conditions.parcelCount.max': 'parcelMax',
  'conditions.orderAttribute': 'attributeName',
  'conditions.orderAttribute.name': 'attributeName',
  'conditions.orderAttribute.values': 'attributeValues',
  'choice.kind': 'choiceKind',
  'choice.days': 'days',
  'choice.carrier': 'carrier',
  'choice.service': 'service',
  boxId: 'boxId',
}
const capitalized = (name: string) => `${name[0]!.toUpperCase()}${name.slice(1)}`

/**
 * The service's problems as a form's: those of `key` (`rules.<index>` or `fallback`) beside their fields
 * (named with `prefix`), the rest (another rule's) above the form in the service's words.
 */
function formErrorsOf(error: ShipmentValidationError, key: string, prefix = ''): FieldErrors {
  const errors: FieldErrors = {}
  for (const [name, messages] of Object.entries(error.errors)) {
    const field = name.startsWith(`${key}.`) ? FORM_FIELD_OF[name.slice(key.length + 1)] : undefined
    if (field) (errors[prefix ? `${prefix}${capitalized(field)}` : field] ??= []).push(...messages.map(besideField))
    else (errors.form ??= []).push(...messages)
  }
  return errors
}

/** A whole number as typed, else the text itself (the service says what it must be); absent when empty. */
const wholeOrText = (raw: string) => (raw === '' ? undefined : /^\d{1,9}$/.test(raw) ? Number(raw) : raw)
const listOf = (raw: string, separator: RegExp) => raw.split(separator).map((each) => each.trim()).filter((each) => each !== '')

/** A choice from a form's fields (`prefix` names the default's). */
function choiceOf(body: Form, prefix = ''): unknown {
  const value = (name: string) => text(body[prefix ? `${prefix}${capitalized(name)}` : name]).trim()
  const kind = value('choiceKind')
  if (kind === 'cheapestWithin') return { kind, days: wholeOrText(value('days')) }
  if (kind === 'service') return { kind, carrier: value('carrier'), service: value('service') }
  return { kind }
}

/** A rule from its form, as the service takes it (the service checks every value). */
function ruleFromForm(body: Form, id: string | undefined): unknown {
  const value = (name: string) => text(body[name]).trim()
  const weighs = value('weightMin') !== '' || value('weightMax') !== ''
  const counts = value('parcelMin') !== '' || value('parcelMax') !== ''
  const attribute = value('attributeName') !== '' || value('attributeValues') !== ''
  return {
    ...(id !== undefined && { id }),
    name: value('name'),
    enabled: value('enabled') === 'true',
    integration: value('integration'),
    conditions: {
      ...(value('countries') !== '' && { countries: listOf(value('countries'), /[\s,;]+/) }),
      ...(weighs && { weight: { min: value('weightMin') || undefined, max: value('weightMax') || undefined, unit: value('weightUnit') } }),
      ...(counts && { parcelCount: { min: wholeOrText(value('parcelMin')), max: wholeOrText(value('parcelMax')) } }),
      ...(attribute && { orderAttribute: { name: value('attributeName'), values: listOf(value('attributeValues'), /,/) } }),
    },
    choice: choiceOf(body),
    boxId: wholeOrText(value('boxId')) ?? null,
  }
}

export function registerRulesRoutes(screen: AdminScreen, renderShipment: RenderShipment) {
  const { scope, options, prefix, context, sendPage, noticeOf } = screen
  const { view, edit } = routePermissions
  const rules = options.rules
  const base = '/shipping-rules'

  /** Enabled integrations whose provider sells labels: what a rule may buy through. */
  const labelIntegrations = async () =>
    (await options.integrations.list()).filter((integration) => options.integrations.isEnabled(integration) && options.providers.get(integration.providerId ?? '')?.deliveries).map((integration) => integration.handle)

  async function renderList(request: FastifyRequest, reply: FastifyReply, state: { errors?: FieldErrors; values?: Record<string, string>; status?: number } = {}) {
    const [saved, integrations, boxes] = await Promise.all([rules.saved(), labelIntegrations(), options.boxes.listBoxes()])
    const pageContext = context(request, reply)
    const content = html`${rulesListPage(pageContext, { saved, labelIntegrations: integrations, boxes, defaultValues: state.values ?? defaultValues(saved.fallback), errors: state.errors ?? {}, flash: noticeOf(request) })}${await addressSettingSectionOf(options, pageContext)}`
    return sendPage(request, reply, 'Shipping rules', content, state.status)
  }

  async function renderForm(request: FastifyRequest, reply: FastifyReply, rule: { id: string; position: number } | null, values: Record<string, string>, errors: FieldErrors = {}, status = 200) {
    const [integrations, boxes] = await Promise.all([labelIntegrations(), options.boxes.listBoxes()])
    const content = ruleFormPage(context(request, reply), { ruleId: rule?.id ?? null, position: rule?.position ?? null, values, errors, labelIntegrations: integrations, boxes })
    return sendPage(request, reply, rule ? `Shipping rule ${rule.position}` : 'New shipping rule', content, status)
  }

  /** The stored rule with this id and its index, or a 404. */
  async function ruleAt(raw: string): Promise<{ list: ShippingRule[]; index: number; fallback: Awaited<ReturnType<typeof rules.current>>['fallback'] }> {
    const { rules: list, fallback } = await rules.current()
    const index = list.findIndex((rule) => rule.id === raw)
    if (index < 0) throw AdminNotFound('Shipping rule')
    return { list, index, fallback }
  }

  // What a form sent, as typed: the service checks every rule (and names each problem) before it writes.
  const save = (request: FastifyRequest, list: unknown[], fallback: unknown) => rules.replace({ rules: list, fallback } as ShippingRulesInput, { userId: adminUserId(request) })

  scope.get(base, { schema: hide, config: view }, async (request, reply) => renderList(request, reply))
  scope.get(`${base}/new`, { schema: hide, config: edit }, async (request, reply) => renderForm(request, reply, null, ruleValues(null)))
  scope.get<{ Params: { ruleId: string } }>(`${base}/rule/:ruleId`, { schema: hide, config: view }, async (request, reply) => {
    const { list, index } = await ruleAt(request.params.ruleId)
    return renderForm(request, reply, { id: list[index]!.id, position: index + 1 }, ruleValues(list[index]!))
  })

  /** Saves a rule from its form: a new one last, an existing one in its place; a refusal shows beside the fields. */
  async function saveRule(request: FastifyRequest<{ Body: Form }>, reply: FastifyReply, ruleId: string | null) {
    const current = ruleId === null ? { ...(await rules.current()), index: -1 } : await ruleAt(ruleId).then(({ list, index, fallback }) => ({ rules: list, index, fallback }))
    const list: unknown[] = [...current.rules]
    const index = current.index < 0 ? list.length : current.index
    list[index] = ruleFromForm(request.body, ruleId ?? undefined)
    try {
      await save(request, list, current.fallback)
    } catch (error) {
      const values = Object.fromEntries([...RULE_FIELDS.keys(), 'enabled'].map((name) => [name, text(request.body[name])]))
      const rule = ruleId === null ? null : { id: ruleId, position: index + 1 }
      if (error instanceof ShipmentValidationError) return renderForm(request, reply, rule, values, formErrorsOf(error, `rules.${index}`), 422)
      const refusal = refusalOf(error)
      if (refusal) return renderForm(request, reply, rule, values, { form: [refusal] }, 502)
      throw error
    }
    return reply.redirect(`${prefix}${base}?notice=${ruleId === null ? 'created' : 'saved'}`, 303)
  }
  scope.post<{ Body: Form }>(`${base}/new`, { schema: formSchema, config: edit }, async (request, reply) => saveRule(request, reply, null))
  scope.post<{ Params: { ruleId: string }; Body: Form }>(`${base}/rule/:ruleId`, { schema: formSchema, config: edit }, async (request, reply) => saveRule(request, reply, request.params.ruleId))

  /** A change of the list (move, enable, disable, delete), saved whole; a refusal shows on the list. */
  async function changeList(request: FastifyRequest, reply: FastifyReply, change: (list: ShippingRule[], index: number) => ShippingRule[]) {
    const { list, index, fallback } = await ruleAt((request.params as { ruleId: string }).ruleId)
    try {
      await save(request, change([...list], index), fallback)
    } catch (error) {
      if (error instanceof ShipmentValidationError) return renderList(request, reply, { errors: { form: Object.values(error.errors).flat() }, status: 422 })
      const refusal = refusalOf(error)
      if (refusal) return renderList(request, reply, { errors: { form: [refusal] }, status: 502 })
      throw error
    }
    return reply.redirect(`${prefix}${base}?notice=saved`, 303)
  }
  const swap = (list: ShippingRule[], a: number, b: number) => {
    if (b < 0 || b >= list.length) return list
    ;[list[a], list[b]] = [list[b]!, list[a]!]
    return list
  }
  const actions: Record<string, (list: ShippingRule[], index: number) => ShippingRule[]> = {
    up: (list, index) => swap(list, index, index - 1),
    down: (list, index) => swap(list, index, index + 1),
    enable: (list, index) => list.map((rule, at) => (at === index ? { ...rule, enabled: true } : rule)),
    disable: (list, index) => list.map((rule, at) => (at === index ? { ...rule, enabled: false } : rule)),
    delete: (list, index) => list.filter((_, at) => at !== index),
  }
  for (const [action, change] of Object.entries(actions)) {
    scope.post<{ Params: { ruleId: string } }>(`${base}/rule/:ruleId/${action}`, { schema: formSchema, config: edit }, async (request, reply) => changeList(request, reply, change))
  }

  scope.post<{ Body: Form }>(`${base}/default`, { schema: formSchema, config: edit }, async (request, reply) => {
    const body = request.body
    const integration = text(body.defaultIntegration).trim()
    const boxId = text(body.defaultBoxId).trim()
    const fallback = integration === '' ? null : { integration, choice: choiceOf(body, 'default'), boxId: wholeOrText(boxId) ?? null }
    try {
      await save(request, (await rules.current()).rules, fallback)
    } catch (error) {
      const values = Object.fromEntries(['defaultIntegration', 'defaultChoiceKind', 'defaultDays', 'defaultCarrier', 'defaultService', 'defaultBoxId'].map((name) => [name, text(body[name])]))
      if (error instanceof ShipmentValidationError) return renderList(request, reply, { errors: formErrorsOf(error, 'fallback', 'default'), values, status: 422 })
      const refusal = refusalOf(error)
      if (refusal) return renderList(request, reply, { errors: { form: [refusal] }, values, status: 502 })
      throw error
    }
    return reply.redirect(`${prefix}${base}?notice=saved#default`, 303)
  })

  // The shipment page's dry run, rated: quotes are asked and stored (as "Get rates" does); nothing is bought.
  scope.post<{ Params: { id: string } }>('/shipments/:id/shipping-rules/rate', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const explanation: ShipmentExplanation = await rules.explain(id, { rate: true })
    return renderShipment(request, reply, id, { rulesExplanation: explanation })
  })
}
