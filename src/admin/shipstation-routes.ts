// The ShipStation screen's route: the order exchange's URL, settings and recent activity.
import { shipStationPage } from './shipstation-page.js'
import { hide, routePermissions, type AdminScreen } from './screen.js'

export function registerShipStationRoutes(screen: AdminScreen) {
  const { scope, options, sendPage } = screen
  const { orderExchange, timeZone } = options
  const { manage } = routePermissions

  scope.get('/shipstation', { schema: hide, config: manage }, async (request, reply) => {
    const exchange = orderExchange
      ? {
          url: `${request.protocol}://${request.host}${options.orderExchangePrefix}/process`,
          settings: orderExchange.settings,
          trackingFieldProblems: options.trackingFieldProblems,
          // The newest 100 answered and the newest 100 refused, merged: a flood of refusals hides no export that worked.
          activity: (await Promise.all([false, true].map((refused) => orderExchange.activity.recent(100, { refused })))).flat().sort((a, b) => b.id - a.id),
        }
      : null
    return sendPage(request, reply, 'ShipStation', shipStationPage(exchange, timeZone))
  })
}
