// The `returns` option: the reasons a return line may give, and returns customers start themselves
// (the window, automatic authorisation and its label, the rate limit, the host's hook).
import { Type, type Static } from '@sinclair/typebox'
import type { CustomerMayReturn, CustomerReturnLabel } from './customer-returns.js'

/**
 * Returns: `reasons`, the codes a return line may give (default damaged, defective, wrong_item,
 * not_as_described, no_longer_needed, other).
 */
export interface ReturnsOptions {
  reasons?: string[] | undefined
  /**
   * Customers start returns themselves from the tracking page of a delivered shipment, for this many
   * days after delivery. Default 0: they cannot (and the page offers nothing). Needs `trackingPage`.
   */
  windowDays?: number | undefined
  /** Returns customers start are authorised at once (source `automatic`). Default false: the shop authorises. */
  autoAuthorise?: boolean | undefined
  /**
   * With `autoAuthorise`: the return label bought at once for a customer's return (the delivery
   * provider's integration, carrier, service and the parcel); the page shows its link.
   */
  customerLabel?: CustomerReturnLabel | undefined
  /** Return forms accepted per tracking link and per client address in `windowMs`, per process. Default 10 an hour. */
  customerRateLimit?: { max?: number | undefined; windowMs?: number | undefined } | undefined
  /** The host's word on a customer's return: true, or the reason it refuses (shown to the customer). */
  customerMayReturn?: CustomerMayReturn | undefined
}

/** The plain-data part of the `returns` option (the host's hook is checked apart), with the plugin's other plain data. */
export const ReturnsOptionsSchema = Type.Object({
  returns: Type.Object(
    {
      // The reasons a return line may give: short codes the host translates where it shows them.
      reasons: Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.-]+$' }), {
        minItems: 1,
        maxItems: 100,
        uniqueItems: true,
        default: ['damaged', 'defective', 'wrong_item', 'not_as_described', 'no_longer_needed', 'other'],
      }),
      // Customers start returns from the tracking page for this many days after delivery; 0: they cannot.
      windowDays: Type.Integer({ minimum: 0, maximum: 3650, default: 0 }),
      // Returns customers start are authorised at once (their label bought when `customerLabel` is set).
      autoAuthorise: Type.Boolean({ default: false }),
      customerLabel: Type.Optional(
        Type.Object(
          {
            integration: Type.String({ minLength: 1, maxLength: 255 }),
            carrier: Type.String({ minLength: 1, maxLength: 255 }),
            service: Type.String({ minLength: 1, maxLength: 255 }),
            weight: Type.Object({ value: Type.String({ pattern: '^\\d{1,9}(\\.\\d{1,6})?$' }), unit: Type.String({ minLength: 1, maxLength: 8 }) }, { additionalProperties: false }),
            dimensions: Type.Optional(
              Type.Object({ length: Type.String(), width: Type.String(), height: Type.String(), unit: Type.String() }, { additionalProperties: false }),
            ),
            labelFormat: Type.Optional(Type.Union([Type.Literal('PDF'), Type.Literal('PNG'), Type.Literal('ZPL')])),
          },
          { additionalProperties: false },
        ),
      ),
      // Return forms sent per link and per client address in a window, counted in each process.
      customerRateLimit: Type.Object(
        { max: Type.Integer({ minimum: 1, default: 10 }), windowMs: Type.Integer({ minimum: 1000, default: 60 * 60 * 1000 }) },
        { additionalProperties: false, default: {} },
      ),
    },
    { additionalProperties: false, default: {} },
  ),
})

export type ResolvedReturnsOptions = Static<typeof ReturnsOptionsSchema>['returns'] & {
  /** `returns.customerMayReturn`, or null. */
  customerMayReturn: CustomerMayReturn | null
}

/**
 * The host's hook on customers' returns, a function: checked before the plain data and taken out of
 * `data.returns` (the plain data the schema checks). Default none.
 */
export function takeCustomerMayReturn(data: Record<string, unknown>, fail: (option: string, reason: string) => never): CustomerMayReturn | null {
  let customerMayReturn: CustomerMayReturn | null = null
  if (typeof data.returns === 'object' && data.returns !== null && 'customerMayReturn' in data.returns) {
    const { customerMayReturn: given, ...rest } = data.returns as { customerMayReturn?: unknown }
    if (given !== undefined && typeof given !== 'function') fail('returns.customerMayReturn', 'must be a function returning true or the reason it refuses')
    customerMayReturn = (given as CustomerMayReturn | undefined) ?? null
    data.returns = rest
  }
  return customerMayReturn
}

/** The returns' options once the plain data passed its schema; `trackingPage`: whether the tracking page is mounted. */
export function resolveReturnsOptions(
  customerMayReturn: CustomerMayReturn | null,
  data: Static<typeof ReturnsOptionsSchema>,
  trackingPage: boolean,
  fail: (option: string, reason: string) => never,
): ResolvedReturnsOptions {
  const { returns } = data
  if (returns.windowDays > 0 && !trackingPage) fail('returns.windowDays', 'needs the trackingPage option: customers start returns from the tracking page')
  if (returns.customerLabel !== undefined && !returns.autoAuthorise) fail('returns.customerLabel', 'needs returns.autoAuthorise: a label is bought only for a return the shop authorised')
  return { ...returns, customerMayReturn }
}
