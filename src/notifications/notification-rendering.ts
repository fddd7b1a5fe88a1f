// Rendering a notification: what its templates see (the shipment, its order and items, the tracking
// link, the change; or the return, its lines and its order), its recipients, one template at a time.
import type { NotificationRow } from '../db/data-layer.js'
import { isShipmentStatus, STATUS_LABELS, type Shipment } from '../model/shipment.js'
import { RETURN_STATE_LABELS, type Return, type ReturnState } from '../model/return.js'
import { renderInTurn } from './template-engines.js'
import { EMAIL, type NotifiedChange, type RenderedNotification } from './notification.js'
import type { NotificationServiceContext } from './notification-context.js'

export function createNotificationRendering(shared: NotificationServiceContext) {
  const { deps, engines } = shared

  /** What a template sees: the shipment, its order and items, the tracking link, the status change or the carrier's news. */
  async function shipmentScope(shipment: Shipment, change: NotifiedChange) {
    const order = await deps.orderStore.findOrder(shipment.orderId)
    const trackingPage = deps.trackingLinks ? await deps.trackingLinks.url(shipment.id) : null
    return {
      shipment: { ...shipment, statusLabel: STATUS_LABELS[shipment.status] },
      order: order ? { reference: order.reference, statusHandle: order.statusHandle, email: order.email ?? null } : null,
      items: shipment.items,
      trackingLink: trackingPage ?? shipment.trackingUrl,
      trackingPage,
      carrierTrackingUrl: shipment.trackingUrl,
      fromStatus: change.from,
      toStatus: change.to,
      fromStatusLabel: change.from && isShipmentStatus(change.from) ? STATUS_LABELS[change.from] : null,
      toStatusLabel: isShipmentStatus(change.to) ? STATUS_LABELS[change.to] : change.to,
      message: change.message,
      // The carrier's news, for notifications sent on a trigger: null for a status change.
      trigger: change.trigger ?? null,
      checkpoint: change.checkpoint ?? null,
      estimate: change.estimate ?? null,
      estimatedDelivery: shipment.estimatedDelivery,
    }
  }

  /**
   * What a template sent on a return's change sees: the return (its lines with the order lines' names),
   * its order, the change. `shipment` is absent: a return belongs to the order, not to one shipment.
   */
  async function returnScope(entry: Return, change: NotifiedChange) {
    const [order, orderLines] = await Promise.all([deps.orderStore.findOrder(entry.orderId), deps.orderStore.orderLines?.(entry.orderId) ?? null])
    const lines = entry.lines.map((line) => {
      const orderLine = orderLines?.find((candidate) => candidate.id === line.lineItemId)
      return { ...line, name: orderLine?.name ?? null, sku: orderLine?.sku ?? null }
    })
    const stateLabel = (state: string | null) => (state !== null && Object.hasOwn(RETURN_STATE_LABELS, state) ? RETURN_STATE_LABELS[state as ReturnState] : state)
    return {
      return: {
        id: entry.id,
        reference: entry.reference,
        state: entry.state,
        stateLabel: stateLabel(entry.state),
        message: entry.stateMessage,
        lines,
        trackingNumber: entry.trackingNumber,
        trackingUrl: entry.trackingUrl,
        carrier: entry.carrier,
        service: entry.service,
        labelUrl: entry.label?.url ?? null,
        // The return's own page beside the tracking page (its state, timeline and label), when it is mounted.
        pageUrl: deps.trackingLinks ? deps.trackingLinks.returnUrl(entry.id) : null,
        dateCreated: entry.dateCreated,
        dateReceived: entry.dateReceived,
      },
      order: order ? { reference: order.reference, statusHandle: order.statusHandle, email: order.email ?? null } : null,
      items: lines,
      trackingLink: entry.trackingUrl,
      fromState: change.from,
      toState: change.to,
      fromStateLabel: stateLabel(change.from),
      toStateLabel: stateLabel(change.to),
      message: change.message,
      trigger: change.trigger ?? null,
    }
  }

  async function render(row: NotificationRow, scope: { order: { email: string | null } | null }): Promise<RenderedNotification> {
    const email = scope.order?.email
    const customer = email && EMAIL.test(email) ? [email] : []
    const to = row.recipient === 'customer' ? customer : row.recipient === 'addresses' ? row.addresses : [...new Set([...customer, ...row.addresses])]
    // One template at a time, each in a turn of the event loop of its own: Liquid renders synchronously,
    // so three together would hold every other request of the host for three render limits.
    const { html: htmlEngine, text: textEngine } = await engines()
    const subject = await renderInTurn(textEngine, row.subject, scope)
    const html = await renderInTurn(htmlEngine, row.html, scope)
    const text = await renderInTurn(textEngine, row.text, scope)
    // A subject is one line: line breaks from a template or a value would start new mail headers.
    return { to, subject: subject.replace(/[\r\n]+/g, ' ').trim().slice(0, 998), html, text }
  }

  return { shipmentScope, returnScope, render }
}

export type NotificationRendering = ReturnType<typeof createNotificationRendering>
