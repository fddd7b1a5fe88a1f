// Where the package's surfaces are mounted: the defaults, and the host's prefixes over them.

export const DEFAULT_PREFIXES = {
  shipmentApi: '/shipments/api',
  gateway: '/actions/shipments/gateway',
  orderExchange: '/actions/shippingplatformconnect/orders',
}

/** Where the surfaces are mounted; a prefix left out (or undefined) keeps its default. */
export interface ShipmentsPrefixes {
  shipmentApi?: string | undefined
  gateway?: string | undefined
  orderExchange?: string | undefined
}

/** The prefixes in use: the host's where given, the defaults for the rest (an undefined one included). */
export function prefixesWithDefaults(prefixes: ShipmentsPrefixes | undefined): typeof DEFAULT_PREFIXES {
  const given = Object.entries(prefixes ?? {}).filter(([, prefix]) => prefix !== undefined)
  return { ...DEFAULT_PREFIXES, ...(Object.fromEntries(given) as Partial<typeof DEFAULT_PREFIXES>) }
}
