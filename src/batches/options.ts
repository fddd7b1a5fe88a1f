// The `batches` option: whether this instance works on label batches, how often it looks for one, how
// long its hold on one lasts, how many purchases it runs at once, and how a batch backs off.
import { Type, type Static } from '@sinclair/typebox'

/**
 * Label batches: `worker` (default true) runs the batch worker on this instance (every instance may; a
 * batch is held by one at a time); `pollIntervalMs` (1000) how often it looks for a batch to work on;
 * `leaseMs` (30000) how long its hold on a batch lasts without renewal (renewed every third of that), so
 * a batch left by a dead instance is taken over within about this long; `concurrency` (4) purchases at
 * once; `maxShipments` (1000) per batch; `backoffMs` (2000) the first wait after a 429 or an unknown
 * outcome, doubled on each later try up to `maxBackoffMs` (300000), with ±20 % jitter, never shorter than
 * the provider's Retry-After; `maxAttempts` (10) tries of one parcel before it fails with the last reason;
 * `rateLimitCooldownMs` (60000) how long the concurrency stays lowered after a 429.
 */
export interface BatchesOptions {
  batches?:
    | {
        worker?: boolean | undefined
        pollIntervalMs?: number | undefined
        leaseMs?: number | undefined
        concurrency?: number | undefined
        maxShipments?: number | undefined
        backoffMs?: number | undefined
        maxBackoffMs?: number | undefined
        maxAttempts?: number | undefined
        rateLimitCooldownMs?: number | undefined
      }
    | undefined
}

export const BatchesOptionsSchema = Type.Object({
  batches: Type.Object(
    {
      worker: Type.Boolean({ default: true }),
      pollIntervalMs: Type.Integer({ minimum: 10, maximum: 60_000, default: 1000 }),
      leaseMs: Type.Integer({ minimum: 300, maximum: 10 * 60 * 1000, default: 30_000 }),
      concurrency: Type.Integer({ minimum: 1, maximum: 32, default: 4 }),
      maxShipments: Type.Integer({ minimum: 1, maximum: 10_000, default: 1000 }),
      backoffMs: Type.Integer({ minimum: 1, maximum: 60 * 60 * 1000, default: 2000 }),
      maxBackoffMs: Type.Integer({ minimum: 1, maximum: 24 * 60 * 60 * 1000, default: 5 * 60 * 1000 }),
      maxAttempts: Type.Integer({ minimum: 1, maximum: 100, default: 10 }),
      rateLimitCooldownMs: Type.Integer({ minimum: 0, maximum: 60 * 60 * 1000, default: 60_000 }),
    },
    { additionalProperties: false, default: {} },
  ),
})

export type ResolvedBatchesOptions = Static<typeof BatchesOptionsSchema>['batches']
