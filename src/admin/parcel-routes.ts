// The parcels and boxes routes: a shipment's parcels, rates and labels (answered with the shipment's page)
// and the box catalogue with the ship-from address.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { DeliveryErrors, ShipmentValidationError } from '../errors.js'
import type { PostalAddress } from '../order-store.js'
import type { WeightUnit } from '../model/units.js'
import type { SuggestionToAccept } from '../deliveries/boxes.js'
import type { FieldErrors } from './components.js'
import { boxCataloguePage, SHIP_FROM_FIELDS } from './parcel-pages.js'
import type { RenderShipment } from './shipment-routes.js'
import { adminUserId, formSchema, hide, positiveId, refusalOf, routePermissions, shipmentId, text, type AdminScreen, type Form } from './screen.js'

export function registerParcelRoutes(screen: AdminScreen, renderShipment: RenderShipment) {
  registerShipmentParcelRoutes(screen, renderShipment)
  registerBoxRoutes(screen)
}

/** A shipment's parcels: added, changed, removed, suggested from the boxes; their rates, labels and voids. */
function registerShipmentParcelRoutes(screen: AdminScreen, renderShipment: RenderShipment) {
  const { scope, options, prefix } = screen
  const { edit, buyLabels } = routePermissions

  // Parcels and labels: each form posts here and comes back to the shipment page, with the refusal
  // (the carrier's own words included) beside the form that caused it.
  const parcelId = (raw: string) => positiveId(raw, () => new DeliveryErrors.ParcelNotFound(raw))

  scope.post<{ Params: { id: string }; Body: Form }>('/shipments/:id/parcels', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const values = { 'parcel.weight': text(request.body['parcel.weight']), 'parcel.weightUnit': text(request.body['parcel.weightUnit']) }
    try {
      // The unit as typed: the service checks it (its per-field 422 is shown beside the field).
      await options.deliveries.addParcel(id, { weight: { value: values['parcel.weight'], unit: values['parcel.weightUnit'] as WeightUnit } }, { userId: adminUserId(request) })
    } catch (error) {
      if (error instanceof ShipmentValidationError) {
        const parcelErrors: FieldErrors = {}
        for (const [name, messages] of Object.entries(error.errors)) (parcelErrors[name === 'weight.value' ? 'parcel.weight' : name === 'weight.unit' ? 'parcel.weightUnit' : `parcel.${name}`] ??= []).push(...messages)
        return renderShipment(request, reply, id, { parcelErrors, parcelValues: values, status: 422 })
      }
      const refusal = refusalOf(error)
      if (refusal) return renderShipment(request, reply, id, { parcelErrors: { 'parcel.form': [refusal] }, parcelValues: values, status: 422 })
      throw error
    }
    return reply.redirect(`${prefix}/shipments/${id}?notice=saved#parcels`, 303)
  })

  // A parcel's weight and size changed, or the parcel removed (while it has no label): a refusal shows
  // in the parcel's own form, with what was typed.
  scope.post<{ Params: { id: string; parcelId: string }; Body: Form }>('/shipments/:id/parcels/:parcelId/change', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const parcel = parcelId(request.params.parcelId)
    const key = (name: string) => `edit.${parcel}.${name}`
    const values = Object.fromEntries(['weight', 'weightUnit', 'length', 'width', 'height', 'dimensionUnit'].map((name) => [key(name), text(request.body[key(name)]).trim()]))
    const sized = [values[key('length')], values[key('width')], values[key('height')]].some((value) => value !== '')
    const change = {
      weight: { value: values[key('weight')]!, unit: values[key('weightUnit')] as 'kg' },
      dimensions: sized ? { length: values[key('length')]!, width: values[key('width')]!, height: values[key('height')]!, unit: values[key('dimensionUnit')] as 'cm' } : null,
    }
    try {
      await options.deliveries.updateParcel(id, parcel, change, { userId: adminUserId(request) })
    } catch (error) {
      if (error instanceof ShipmentValidationError) {
        const parcelErrors: FieldErrors = {}
        for (const [name, messages] of Object.entries(error.errors)) {
          // The service names weight.value, dimensions.width...: the form's fields are flat.
          const flat = name === 'weight.value' ? 'weight' : name === 'weight.unit' ? 'weightUnit' : name === 'dimensions.unit' ? 'dimensionUnit' : name.replace(/^dimensions\./, '')
          ;(parcelErrors[key(['weight', 'weightUnit', 'length', 'width', 'height', 'dimensionUnit'].includes(flat) ? flat : 'form')] ??= []).push(...messages)
        }
        return renderShipment(request, reply, id, { parcelErrors, parcelValues: values, status: 422 })
      }
      const refusal = refusalOf(error)
      if (refusal) return renderShipment(request, reply, id, { parcelErrors: { [key('form')]: [refusal] }, parcelValues: values, status: 422 })
      throw error
    }
    return reply.redirect(`${prefix}/shipments/${id}?notice=saved#parcels`, 303)
  })
  scope.post<{ Params: { id: string; parcelId: string }; Body: Form }>('/shipments/:id/parcels/:parcelId/remove', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const parcel = parcelId(request.params.parcelId)
    try {
      await options.deliveries.removeParcel(id, parcel, { userId: adminUserId(request) })
    } catch (error) {
      const refusal = refusalOf(error)
      if (refusal) return renderShipment(request, reply, id, { parcelErrors: { [`edit.${parcel}.form`]: [refusal] }, status: 422 })
      throw error
    }
    return reply.redirect(`${prefix}/shipments/${id}?notice=saved#parcels`, 303)
  })

  scope.post<{ Params: { id: string }; Body: Form }>('/shipments/:id/parcels/suggest', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    // Shown first, created only when accepted: the "Accept" form passes this suggestion back as it is.
    const suggestion = await options.boxes.suggestParcels(id, {}, { userId: adminUserId(request) })
    return renderShipment(request, reply, id, { suggestion, status: suggestion.parcels.length === 0 ? 422 : 200 })
  })

  scope.post<{ Params: { id: string }; Body: Form }>('/shipments/:id/parcels/accept-suggestion', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const raw = text(request.body.suggestion)
    let suggestion: unknown = null
    try {
      // Bounded before parsing: a suggestion holds at most 100 parcels.
      suggestion = raw.length <= 200_000 ? JSON.parse(raw) : null
    } catch {
      suggestion = null
    }
    try {
      await options.boxes.acceptSuggestion(id, suggestion as SuggestionToAccept, { userId: adminUserId(request) })
    } catch (error) {
      const refusal = refusalOf(error)
      if (refusal) return renderShipment(request, reply, id, { parcelErrors: { 'parcel.form': [refusal] }, status: error instanceof DeliveryErrors.SuggestionChanged ? 409 : 422 })
      throw error
    }
    return reply.redirect(`${prefix}/shipments/${id}?notice=saved#parcels`, 303)
  })

  scope.post<{ Params: { id: string; parcelId: string }; Body: Form }>('/shipments/:id/parcels/:parcelId/rates', { schema: formSchema, config: edit }, async (request, reply) => {
    const id = shipmentId(request.params.id)
    const parcel = parcelId(request.params.parcelId)
    try {
      const quotes = await options.deliveries.quoteRates(id, parcel, { integration: text(request.body.integration) })
      return renderShipment(request, reply, id, { quotes: { parcelId: parcel, quotes } })
    } catch (error) {
      const refusal = refusalOf(error)
      if (refusal) return renderShipment(request, reply, id, { parcelErrors: { [`label.${parcel}`]: [refusal] }, status: 422 })
      throw error
    }
  })

  for (const action of ['label', 'void'] as const) {
    scope.post<{ Params: { id: string; parcelId: string }; Body: Form }>(`/shipments/:id/parcels/:parcelId/${action}`, { schema: formSchema, config: buyLabels }, async (request, reply) => {
      const id = shipmentId(request.params.id)
      const parcel = parcelId(request.params.parcelId)
      try {
        if (action === 'void') await options.deliveries.voidLabel(id, parcel, { userId: adminUserId(request) })
        else {
          const quoteId = Number(text(request.body.quoteId))
          await options.deliveries.buyLabel(id, parcel, { integration: text(request.body.integration), quoteId: Number.isSafeInteger(quoteId) && quoteId > 0 ? quoteId : undefined, carrier: text(request.body.carrier) || undefined, service: text(request.body.service) || undefined }, { userId: adminUserId(request) })
        }
      } catch (error) {
        const refusal = refusalOf(error)
        if (refusal) return renderShipment(request, reply, id, { parcelErrors: { [`label.${parcel}`]: [refusal] }, status: 422 })
        throw error
      }
      return reply.redirect(`${prefix}/shipments/${id}?notice=saved#parcels`, 303)
    })
  }
}

/** The box catalogue and the ship-from address. */
function registerBoxRoutes(screen: AdminScreen) {
  const { scope, options, prefix, context, sendPage, noticeOf } = screen
  const { view, edit } = routePermissions

  // The box catalogue: the weights and sizes as typed (exact decimals), every problem beside its field.
  async function renderBoxes(request: FastifyRequest, reply: FastifyReply, state: { values?: Record<string, string>; errors?: FieldErrors; status?: number } = {}) {
    const [boxes, shipFrom] = await Promise.all([options.boxes.listBoxes(), options.deliveries.shipFrom()])
    const stored = Object.fromEntries(SHIP_FROM_FIELDS.map(([name]) => [`shipFrom.${name}`, String(shipFrom.address?.[name] ?? '')]))
    const content = boxCataloguePage(context(request, reply), {
      boxes,
      values: state.values ?? {},
      errors: state.errors ?? {},
      flash: noticeOf(request),
      // A refused address shows as typed, beside its errors; otherwise the one in force.
      shipFrom: { values: { ...stored, ...state.values }, source: shipFrom.source },
    })
    return sendPage(request, reply, 'Boxes', content, state.status)
  }
  scope.get('/boxes', { schema: hide, config: view }, async (request, reply) => renderBoxes(request, reply))
  /**
   * Adds a box (boxId null) or changes one from its form: the fields of a box's own form are named
   * `box.<id>.<field>`, so a refusal shows beside that box's fields with what was typed.
   */
  async function saveBox(request: FastifyRequest<{ Body: Form }>, reply: FastifyReply, boxId: number | null) {
    const fieldPrefix = boxId === null ? '' : `box.${boxId}.`
    const names = ['name', 'length', 'width', 'height', 'dimensionUnit', 'emptyWeight', 'maxWeight', 'weightUnit']
    const values = Object.fromEntries(names.map((name) => [`${fieldPrefix}${name}`, text(request.body[`${fieldPrefix}${name}`])]))
    const value = (name: string) => values[`${fieldPrefix}${name}`]!
    const input = {
      name: value('name'),
      innerDimensions: { length: value('length'), width: value('width'), height: value('height'), unit: value('dimensionUnit') as 'cm' },
      emptyWeight: { value: value('emptyWeight'), unit: value('weightUnit') as 'g' },
      maxWeight: { value: value('maxWeight'), unit: value('weightUnit') as 'g' },
    }
    try {
      if (boxId === null) await options.boxes.createBox(input)
      else await options.boxes.updateBox(boxId, input)
    } catch (error) {
      if (!(error instanceof ShipmentValidationError)) throw error
      // The service names `innerDimensions.length`, `maxWeight.value`...: the form's fields are flat.
      const errors: FieldErrors = {}
      for (const [name, messages] of Object.entries(error.errors)) {
        const flat = name.replace(/^innerDimensions\.(length|width|height)$/, '$1').replace(/^innerDimensions\.unit$/, 'dimensionUnit').replace(/^(emptyWeight|maxWeight)\.value$/, '$1').replace(/^(emptyWeight|maxWeight)\.unit$/, 'weightUnit')
        ;(errors[`${fieldPrefix}${flat}`] ??= []).push(...messages)
      }
      return renderBoxes(request, reply, { values, errors, status: 422 })
    }
    return reply.redirect(`${prefix}/boxes?notice=${boxId === null ? 'created' : 'saved'}`, 303)
  }
  scope.post<{ Body: Form }>('/boxes', { schema: formSchema, config: edit }, async (request, reply) => saveBox(request, reply, null))
  scope.post<{ Params: { boxId: string }; Body: Form }>('/boxes/:boxId', { schema: formSchema, config: edit }, async (request, reply) =>
    saveBox(request, reply, positiveId(request.params.boxId, () => new DeliveryErrors.BoxNotFound(request.params.boxId))),
  )
  scope.post<{ Body: Form }>('/boxes/ship-from', { schema: formSchema, config: edit }, async (request, reply) => {
    const values = Object.fromEntries(SHIP_FROM_FIELDS.map(([name]) => [`shipFrom.${name}`, text(request.body[`shipFrom.${name}`])]))
    try {
      await options.deliveries.setShipFrom(Object.fromEntries(SHIP_FROM_FIELDS.map(([name]) => [name, values[`shipFrom.${name}`]])) as unknown as PostalAddress)
    } catch (error) {
      if (!(error instanceof ShipmentValidationError)) throw error
      const errors = Object.fromEntries(Object.entries(error.errors).map(([name, messages]) => [`shipFrom.${name}`, messages]))
      return renderBoxes(request, reply, { values, errors, status: 422 })
    }
    return reply.redirect(`${prefix}/boxes?notice=saved#ship-from`, 303)
  })
  scope.post<{ Params: { boxId: string } }>('/boxes/:boxId/delete', { schema: formSchema, config: edit }, async (request, reply) => {
    await options.boxes.removeBox(positiveId(request.params.boxId, () => new DeliveryErrors.BoxNotFound(request.params.boxId)))
    return reply.redirect(`${prefix}/boxes?notice=saved`, 303)
  })
}
