// The overview screen's routes (the admin's landing page): the figures, late shipments and what is failing.
import { chartScript } from './chart-script.js'
import { overviewPage } from './overview-page.js'
import { hide, routePermissions, type AdminScreen } from './screen.js'

export function registerOverviewRoutes(screen: AdminScreen) {
  const { scope, options, prefix, context, sendPage, orderReferencesOf } = screen
  const { webhooks, orderExchange } = options
  const { view } = routePermissions

  scope.get('/', { schema: hide, config: view }, async (_request, reply) => reply.redirect(`${prefix}/overview`, 303))

  scope.get('/overview', { schema: hide, config: view }, async (request, reply) => {
    const figures = await options.overview()
    // Webhooks and ShipStation are the integration managers' pages: their sections show to them only.
    const manages = request.shipmentsAdmin!.can.manage
    const [orderReferences, subscriptions, lastExport] = await Promise.all([
      orderReferencesOf(request, figures.late.shipments.map((shipment) => shipment.orderId)),
      manages ? webhooks.list() : null,
      manages && orderExchange ? orderExchange.activity.newest('export') : null,
    ])
    const content = overviewPage(context(request, reply), {
      figures,
      orderReferences,
      failingWebhooks: subscriptions?.filter((subscription) => !subscription.enabled || subscription.failureCount > 0) ?? null,
      shipStation: manages ? { configured: orderExchange !== null, lastExport } : null,
      chart: chartScript() !== null,
    })
    return sendPage(request, reply, 'Overview', content)
  })
}
