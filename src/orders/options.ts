// The orders' options: the host's order store (checked for the methods the package calls) and the
// custom fields of the reference store's orders.
import { Type, type Static } from '@sinclair/typebox'
import type { OrderStore } from '../order-store.js'
import type { OrderFieldDefinition } from './reference-store.js'

/** The plugin options the orders own. */
export interface OrderOptions {
  /** The host's orders. Default: the reference order store on the package's own tables. */
  orderStore?: OrderStore | undefined
  /** The custom fields of the reference store's orders (store dropdown, tracking matrix). Default none. */
  orderFields?: OrderFieldDefinition[] | undefined
}

const OrderFieldSchema = Type.Object(
  {
    handle: Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]*$', maxLength: 64 }),
    type: Type.Union([Type.Literal('text'), Type.Literal('dropdown'), Type.Literal('matrix')]),
    options: Type.Optional(Type.Array(Type.String())),
    subFields: Type.Optional(Type.Array(Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]*$', maxLength: 64 }))),
  },
  { additionalProperties: false },
)

/** The plain-data options of the orders, checked with the plugin's other plain data. */
export const OrderOptionsSchema = Type.Object({
  orderFields: Type.Array(OrderFieldSchema, { default: [] }),
})

export interface ResolvedOrderOptions {
  /** The host's order store, or undefined: the plugin makes the reference store. */
  orderStore: OrderStore | undefined
  orderFields: OrderFieldDefinition[]
}

/** Fails naming `orderStore` when the host's store lacks one of `methods` (`purpose` says what needs it). */
export function requireOrderStoreMethods(orderStore: unknown, methods: readonly string[], purpose: string, fail: (option: string, reason: string) => never) {
  for (const method of methods) {
    if (typeof (orderStore as Record<string, unknown>)?.[method] !== 'function') fail('orderStore', `must implement ${method}()${purpose}`)
  }
}

/** The host's order store, checked before the plain data. */
export function checkOrderStore(orderStore: unknown, fail: (option: string, reason: string) => never): void {
  if (orderStore !== undefined) {
    requireOrderStoreMethods(orderStore, ['findOrder', 'findOrderByReference', 'setOrderStatus'], '', fail)
  }
}

/** Fails naming `option` when two of its fields share a handle. */
export function refuseDuplicateHandles(option: string, fields: ReadonlyArray<{ handle: string }>, fail: (option: string, reason: string) => never) {
  const handles = new Set<string>()
  for (const { handle } of fields) {
    if (handles.has(handle)) fail(option, `the handle "${handle}" is declared twice`)
    handles.add(handle)
  }
}

/** The orders' options once the plain data passed its schema. */
export function resolveOrderOptions(
  orderStore: unknown,
  data: Static<typeof OrderOptionsSchema>,
  fail: (option: string, reason: string) => never,
): ResolvedOrderOptions {
  refuseDuplicateHandles('orderFields', data.orderFields, fail)
  return { orderStore: orderStore as OrderStore | undefined, orderFields: data.orderFields }
}
