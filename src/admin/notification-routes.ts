// The customer notifications screen's routes: definitions, templates, their deliveries and test sends.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { NotificationConfigError } from '../errors.js'
import { NOTIFICATION_TEMPLATES, type NotificationTemplateName } from '../notifications/templates.js'
import { shortError } from '../outbox/dispatcher.js'
import type { FieldErrors } from './components.js'
import {
  emptyNotificationForm,
  notificationFormValues,
  notificationListPage,
  notificationPage,
  readNotificationForm,
  type NotificationFormValues,
  type NotificationTestResult,
  type NotificationTestValues,
} from './notification-pages.js'
import { AdminNotFound, formSchema, hide, positiveId, RECENT_DELIVERIES, routePermissions, text, type AdminScreen, type Form } from './screen.js'

export function registerNotificationRoutes(screen: AdminScreen) {
  const { scope, options, prefix, context, sendPage, noticeOf } = screen
  const { shipments, orders, notifications } = options
  const { manage } = routePermissions

  scope.get('/notifications', { schema: hide, config: manage }, async (request, reply) =>
    sendPage(request, reply, 'Notifications', notificationListPage(context(request, reply), { notifications: await notifications.list(), canSend: notifications.canSend, flash: noticeOf(request) })),
  )

  const requireNotification = async (raw: string) => {
    const notification = await notifications.get(positiveId(raw, () => AdminNotFound('Notification')))
    if (!notification) throw AdminNotFound('Notification')
    return notification
  }

  /** Shipment references by id, one lookup per distinct shipment (at most a page of deliveries); a shipment gone since is left out. */
  async function shipmentReferencesOf(shipmentIds: Iterable<number>): Promise<Map<number, string>> {
    const found = await Promise.all([...new Set(shipmentIds)].map((id) => shipments.get(id)))
    return new Map(found.flatMap((shipment) => (shipment ? [[shipment.id, shipment.reference] as const] : [])))
  }

  /** Return references by id, as shipmentReferencesOf. */
  async function returnReferencesOf(returnIds: Iterable<number>): Promise<Map<number, string>> {
    const found = await Promise.all([...new Set(returnIds)].map((id) => options.returns.get(id)))
    return new Map(found.flatMap((entry) => (entry ? [[entry.id, entry.reference] as const] : [])))
  }

  /** The return with this reference (its order's reference, `-r`, a number), or null. */
  async function returnByReference(reference: string) {
    const orderReference = /^(.+)-r\d+$/.exec(reference)?.[1]
    const order = orderReference === undefined ? null : await orders.findOrderByReference(orderReference)
    return order ? ((await options.returns.ofOrder(order.id)).find((candidate) => candidate.reference === reference) ?? null) : null
  }

  async function renderNotification(
    request: FastifyRequest,
    reply: FastifyReply,
    id: number | null,
    state: {
      values?: NotificationFormValues
      errors?: FieldErrors
      test?: { values: NotificationTestValues; errors: FieldErrors; result: NotificationTestResult | null }
      status?: number
    } = {},
  ) {
    const notification = id === null ? null : await notifications.get(id)
    if (id !== null && !notification) throw AdminNotFound('Notification')
    const deliveries = notification ? await notifications.deliveries(notification.id, RECENT_DELIVERIES) : []
    const content = notificationPage(context(request, reply), {
      notification,
      values: state.values ?? (notification ? notificationFormValues(notification) : emptyNotificationForm()),
      errors: state.errors ?? {},
      flash: noticeOf(request),
      canSend: notifications.canSend,
      deliveries,
      shipmentReferences: await shipmentReferencesOf(deliveries.flatMap((delivery) => (delivery.shipmentId === null ? [] : [delivery.shipmentId]))),
      returnReferences: await returnReferencesOf(deliveries.flatMap((delivery) => (delivery.returnId === null ? [] : [delivery.returnId]))),
      test: state.test ?? { values: { shipment: '', to: '' }, errors: {}, result: null },
    })
    return sendPage(request, reply, notification ? `Notification ${notification.name}` : 'New notification', content, state.status)
  }

  /** The service's refusal beside the field it names; `id` (the definition deleted meanwhile) is a 404. */
  const notificationErrors = (error: NotificationConfigError): FieldErrors => {
    if (error.field === 'id') throw AdminNotFound('Notification')
    return { [error.field]: [error.message.slice(error.field.length + 2)] }
  }

  scope.get('/notifications/new', { schema: hide, config: manage }, async (request, reply) => renderNotification(request, reply, null))

  scope.post<{ Body: Form }>('/notifications', { schema: formSchema, config: manage }, async (request, reply) => {
    const { values, input } = readNotificationForm(request.body)
    try {
      const created = await notifications.create(input)
      return reply.redirect(`${prefix}/notifications/${created.id}?notice=created`, 303)
    } catch (error) {
      if (!(error instanceof NotificationConfigError)) throw error
      return renderNotification(request, reply, null, { values, errors: notificationErrors(error), status: 422 })
    }
  })

  // A ready-made notification, added disabled: the store admin reads it on its page and enables it there.
  scope.post<{ Params: { template: string } }>('/notifications/templates/:template', { schema: formSchema, config: manage }, async (request, reply) => {
    const name = request.params.template
    if (!Object.hasOwn(NOTIFICATION_TEMPLATES, name)) throw AdminNotFound('Template')
    const created = await notifications.createFromTemplate(name as NotificationTemplateName)
    return reply.redirect(`${prefix}/notifications/${created.id}?notice=templateAdded`, 303)
  })

  scope.get<{ Params: { id: string } }>('/notifications/:id', { schema: hide, config: manage }, async (request, reply) =>
    renderNotification(request, reply, (await requireNotification(request.params.id)).id),
  )

  scope.post<{ Params: { id: string }; Body: Form }>('/notifications/:id', { schema: formSchema, config: manage }, async (request, reply) => {
    const existing = await requireNotification(request.params.id)
    const { values, input } = readNotificationForm(request.body)
    try {
      await notifications.update(existing.id, input)
    } catch (error) {
      if (!(error instanceof NotificationConfigError)) throw error
      return renderNotification(request, reply, existing.id, { values, errors: notificationErrors(error), status: 422 })
    }
    return reply.redirect(`${prefix}/notifications/${existing.id}?notice=saved`, 303)
  })

  scope.post<{ Params: { id: string } }>('/notifications/:id/delete', { schema: formSchema, config: manage }, async (request, reply) => {
    const existing = await requireNotification(request.params.id)
    await notifications.remove(existing.id)
    return reply.redirect(`${prefix}/notifications?notice=notificationDeleted`, 303)
  })

  // The answer is the page with what was rendered: a test send is not a change to redirect away from.
  scope.post<{ Params: { id: string }; Body: Form }>('/notifications/:id/test', { schema: formSchema, config: manage }, async (request, reply) => {
    const existing = await requireNotification(request.params.id)
    const values: NotificationTestValues = { shipment: text(request.body.shipment).trim(), to: text(request.body.to).trim() }
    const refuse = (errors: FieldErrors) => renderNotification(request, reply, existing.id, { test: { values, errors, result: null }, status: 422 })
    if (values.shipment === '') return refuse({ shipment: ['Enter a shipment id or reference.'] })
    // A reference first (references may be all digits), then an id, then a return's reference (1001-r001).
    const byReference = (await shipments.list({ search: values.shipment, perPage: 100 })).shipments.find((candidate) => candidate.reference === values.shipment)
    const shipment = byReference ?? (/^[1-9]\d{0,15}$/.test(values.shipment) ? await shipments.get(Number(values.shipment)) : null)
    const entry = shipment ? null : await returnByReference(values.shipment)
    if (!shipment && !entry) return refuse({ shipment: [`No shipment "${values.shipment}".`] })
    const to = values.to === '' ? undefined : values.to.split(/[\s,;]+/).filter((address) => address !== '')
    try {
      const rendered = await notifications.sendTest(existing.id, shipment ? shipment.id : { returnId: entry!.id }, to)
      return renderNotification(request, reply, existing.id, { test: { values, errors: {}, result: { ...rendered, shipmentReference: shipment ? shipment.reference : `Return ${entry!.reference}` } } })
    } catch (error) {
      if (error instanceof NotificationConfigError) {
        // The service names its parameters; the form's fields are `shipment` and `to`.
        const [name] = Object.entries(notificationErrors(error))
        return refuse({ [name[0] === 'shipmentId' || name[0] === 'returnId' ? 'shipment' : name[0]]: name[1] })
      }
      // A template that fails while rendering, or the transport refusing: what the deliveries log would say.
      request.log.warn({ err: error, notificationId: existing.id, shipmentId: shipment?.id, returnId: entry?.id }, 'A test notification failed')
      return refuse({ form: [`The test failed: ${shortError(error)}`] })
    }
  })
}
