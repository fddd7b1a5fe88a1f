// The `deliveries` option: where parcels ship from, how long a rate quote may be bought, how long and
// with what "suggest parcels" packs.
import { Type, type Static } from '@sinclair/typebox'
import type { PostalAddress } from '../order-store.js'
import { PostalAddressSchema } from './ship-from.js'
import { binPackingPacker, type Packer } from './packing.js'

/**
 * Parcels, rates and labels: `shipFrom` (where parcels ship from; rates and labels need it) and
 * `quoteLifetimeMs` (how long a rate quote may be bought, default 15 minutes), `packingTimeoutMs` (how long
 * one "suggest parcels" may pack, default 10 s, then a 422) and `packer` (replaces binpackingjs).
 */
export interface DeliveriesOptions {
  shipFrom?: PostalAddress | undefined
  quoteLifetimeMs?: number | undefined
  packingTimeoutMs?: number | undefined
  packer?: Packer | undefined
}

/** The plain-data part of the `deliveries` option (the packer is checked apart), with the plugin's other plain data. */
export const DeliveriesOptionsSchema = Type.Object({
  deliveries: Type.Object(
    {
      shipFrom: Type.Optional(PostalAddressSchema),
      quoteLifetimeMs: Type.Integer({ minimum: 1000, maximum: 7 * 24 * 60 * 60 * 1000, default: 15 * 60 * 1000 }),
      packingTimeoutMs: Type.Integer({ minimum: 1, maximum: 10 * 60 * 1000, default: 10_000 }),
    },
    { additionalProperties: false, default: {} },
  ),
})

export interface ResolvedDeliveriesOptions {
  shipFrom: PostalAddress | undefined
  quoteLifetimeMs: number
  packingTimeoutMs: number
  /** The packer of "suggest parcels": `deliveries.packer`, or binpackingjs. */
  packer: Packer
}

/**
 * The packer, a function-bearing object: checked before the plain data and taken out of `data.deliveries`
 * (the plain data the schema checks). Default binpackingjs.
 */
export function takePacker(data: Record<string, unknown>, fail: (option: string, reason: string) => never): Packer {
  let packer: Packer = binPackingPacker
  if (typeof data.deliveries === 'object' && data.deliveries !== null && 'packer' in data.deliveries) {
    const { packer: given, ...rest } = data.deliveries as { packer?: unknown }
    if (given !== undefined) {
      if (typeof (given as Partial<Packer> | null)?.pack !== 'function') fail('deliveries.packer', 'must be an object with a pack(items, boxes) method')
      packer = given as Packer
    }
    data.deliveries = rest
  }
  return packer
}

/** The deliveries' options once the plain data passed its schema. */
export function resolveDeliveriesOptions(packer: Packer, data: Static<typeof DeliveriesOptionsSchema>): ResolvedDeliveriesOptions {
  const { shipFrom, quoteLifetimeMs, packingTimeoutMs } = data.deliveries
  return { shipFrom: shipFrom as PostalAddress | undefined, quoteLifetimeMs, packingTimeoutMs, packer }
}
