// The customs screens' routes: the Customs page (the shop's settings, saved whole through the customs
// service) and the shipment page's declaration forms (saved whole, a row added, reset to the built one).
// A refusal answers the page again with each problem beside its field and nothing saved.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { DeclarationInput } from '../customs/checks.js'
import { ShipmentValidationError } from '../errors.js'
import type { FieldErrors } from './components.js'
import { customsFormValues, customsSettingsPage, formFieldOf, type CustomsFormState } from './customs-pages.js'
import type { RenderShipment } from './shipment-routes.js'
import { adminUserId, formSchema, hide, positiveId, refusalOf, routePermissions, shipmentId, text, type AdminScreen, type Form } from './screen.js'
import { DeliveryErrors } from '../errors.js'

const SETTING_NAMES = ['contentsType', 'contentsExplanation', 'nonDeliveryOption', 'restrictionType', 'restrictionComments', 'signer', 'certify', 'incoterm', 'eelPfc', 'currency'] as const
/** Rows one declaration form may hold (the service allows 100 items). */
const MAX_ROWS = 100

/** The settings' fields of a form (names prefixed with `prefix`), as the service takes them: empty is null. */
function settingsOf(body: Form, prefix: string): Record<string, unknown> {
  const value = (name: string) => text(body[`${prefix}${name}`]).trim()
  const settings: Record<string, unknown> = Object.fromEntries(SETTING_NAMES.map((name) => [name, value(name) === '' ? null : value(name)]))
  settings.certify = value('certify') === 'true'
  settings.currency = value('currency')
  return settings
}

/** A declaration from its form: the settings' fields and each row not marked for removal, in order. */
function declarationOf(body: Form, prefix: string): DeclarationInput {
  const count = Math.min(MAX_ROWS, /^\d{1,3}$/.test(text(body.itemCount)) ? Number(text(body.itemCount)) : 0)
  const items = []
  for (let index = 0; index < count; index++) {
    const value = (name: string) => text(body[`${prefix}items[${index}].${name}`]).trim()
    if (value('remove') === 'true') continue
    const whole = (raw: string) => (/^\d{1,9}$/.test(raw) ? Number(raw) : raw)
    items.push({
      lineItemId: value('lineItemId') === '' ? null : whole(value('lineItemId')),
      description: value('description'),
      quantity: whole(value('quantity')),
      value: value('value'),
      weight: { value: value('weight.value'), unit: value('weight.unit') },
      tariffNumber: value('tariffNumber') || null,
      originCountry: value('originCountry').toUpperCase() || null,
      sku: value('sku') || null,
    })
  }
  return { ...settingsOf(body, prefix), items } as unknown as DeclarationInput
}

/** The form's values of a declaration as sent (its rows renumbered once removed ones are gone). */
function valuesOf(input: DeclarationInput): Record<string, string> {
  const shown = { ...input, items: input.items.map((item) => ({ ...item, lineItemId: item.lineItemId ?? null, sku: item.sku ?? null, quantity: item.quantity })) }
  return customsFormValues(shown as never)
}

const errorsOf = (error: ShipmentValidationError): FieldErrors => Object.fromEntries(Object.entries(error.errors).map(([path, messages]) => [formFieldOf(path), messages]))

export function registerCustomsRoutes(screen: AdminScreen, renderShipment: RenderShipment) {
  const { scope, options, context, sendPage, noticeOf, prefix } = screen
  const { view, edit } = routePermissions
  const customs = options.customs

  async function renderSettings(request: FastifyRequest, reply: FastifyReply, state: { values?: Record<string, string>; errors?: FieldErrors; status?: number } = {}) {
    const saved = await customs.settings()
    const content = customsSettingsPage(context(request, reply), { saved, values: state.values ?? customsFormValues(saved), errors: state.errors ?? {}, flash: noticeOf(request) })
    return sendPage(request, reply, 'Customs', content, state.status)
  }

  scope.get('/customs', { schema: hide, config: view }, async (request, reply) => renderSettings(request, reply))

  scope.post<{ Body: Form }>('/customs', { schema: formSchema, config: edit }, async (request, reply) => {
    const input = settingsOf(request.body, '')
    try {
      await customs.replaceSettings(input, { userId: adminUserId(request) })
    } catch (error) {
      if (!(error instanceof ShipmentValidationError)) throw error
      const values = Object.fromEntries(SETTING_NAMES.map((name) => [name, name === 'certify' ? (input.certify ? 'true' : '') : text(request.body[name])]))
      return renderSettings(request, reply, { values, errors: error.errors, status: 422 })
    }
    return reply.redirect(`${prefix}/customs?notice=saved`, 303)
  })

  const parcelIdOf = (raw: string) => positiveId(raw, () => new DeliveryErrors.ParcelNotFound(raw))
  type ParcelParams = { Params: { id: string; parcelId: string }; Body: Form }
  const declarationPath = '/shipments/:id/parcels/:parcelId/customs'
  const backTo = (id: number, parcelId: number) => `${prefix}/shipments/${id}?notice=saved#customs-parcel-${parcelId}`

  /** The shipment page with this parcel's form as sent and its problems beside the fields. */
  const again = (request: FastifyRequest, reply: FastifyReply, id: number, customsState: CustomsFormState) => renderShipment(request, reply, id, { customs: customsState, status: 422 })

  scope.post<ParcelParams>(declarationPath, { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const parcelId = parcelIdOf(request.params.parcelId)
    const input = declarationOf(request.body, `parcel${parcelId}.`)
    if (text(request.body.action) === 'addRow') {
      const values = valuesOf(input)
      const count = Number(values.itemCount)
      if (count < MAX_ROWS) Object.assign(values, { itemCount: String(count + 1), [`items[${count}].quantity`]: '1', [`items[${count}].weight.unit`]: 'kg' })
      return renderShipment(request, reply, id, { customs: { parcelId, values, errors: {} } })
    }
    try {
      await customs.saveDeclaration(id, parcelId, input)
    } catch (error) {
      if (error instanceof ShipmentValidationError) return again(request, reply, id, { parcelId, values: valuesOf(input), errors: errorsOf(error) })
      const refusal = refusalOf(error)
      if (refusal === null) throw error
      return again(request, reply, id, { parcelId, values: valuesOf(input), errors: { form: [refusal] } })
    }
    return reply.redirect(backTo(id, parcelId), 303)
  })

  scope.post<ParcelParams>(`${declarationPath}/reset`, { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const parcelId = parcelIdOf(request.params.parcelId)
    try {
      await customs.resetDeclaration(id, parcelId)
    } catch (error) {
      const refusal = refusalOf(error)
      if (refusal === null) throw error
      return renderShipment(request, reply, id, { customs: { parcelId, values: null, errors: { form: [refusal] } }, status: 409 })
    }
    return reply.redirect(backTo(id, parcelId), 303)
  })
}
