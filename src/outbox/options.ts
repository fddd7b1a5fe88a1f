// The outbox's and the outbound webhooks' options: claims, job deadlines, polling, retention, the retry
// delays of deliveries and pushes; the webhooks' reach, timeout and when a subscription is disabled.
import { Type, type Static } from '@sinclair/typebox'

/**
 * Delays before each retry of a webhook delivery or a push: 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h,
 * 4 h, 8 h, 8 h (about a day in all, each ±20 % jitter); then the job fails for good.
 */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800, 28_800].map((seconds) => seconds * 1000)

/** The plugin options the outbox and the webhooks own. */
export interface OutboxOptions {
  /**
   * The transactional outbox: `leaseMs` (default 5000) is how long a claim holds a message without
   * renewal (the instance working on it renews it every fifth of that), so one left by a dead process
   * is taken up within about this long; `jobTimeoutMs` (30000) bounds one attempt of a job (mail,
   * webhook delivery, push): past it the attempt counts as failed and is retried, a late answer
   * ignored; `pollIntervalMs` (1000) how often due
   * messages are looked for; `retentionMs` (7 days) how long delivered ones are kept; `retryDelaysMs`
   * the delays before each retry of a webhook delivery or a push (DEFAULT_RETRY_DELAYS_MS, about a day).
   */
  outbox?: { leaseMs?: number | undefined; jobTimeoutMs?: number | undefined; pollIntervalMs?: number | undefined; retentionMs?: number | undefined; retryDelaysMs?: number[] | undefined } | undefined
  /**
   * Outbound webhooks: `allowPrivateAddresses` (default false) lets subscriptions reach loopback and
   * private addresses; `timeoutMs` (10000) bounds each request; `disableAfterFailures` (20) failed
   * attempts in a row disable a subscription.
   */
  webhooks?: { allowPrivateAddresses?: boolean | undefined; timeoutMs?: number | undefined; disableAfterFailures?: number | undefined } | undefined
}

/** The outbox's and the webhooks' options (plain data all), checked with the plugin's other plain data. */
export const OutboxOptionsSchema = Type.Object({
  outbox: Type.Object(
    {
      leaseMs: Type.Integer({ minimum: 1000, default: 5000 }),
      jobTimeoutMs: Type.Integer({ minimum: 100, default: 30_000 }),
      pollIntervalMs: Type.Integer({ minimum: 10, default: 1000 }),
      retentionMs: Type.Integer({ minimum: 0, default: 7 * 24 * 60 * 60 * 1000 }),
      retryDelaysMs: Type.Array(Type.Integer({ minimum: 0 }), { maxItems: 100, default: DEFAULT_RETRY_DELAYS_MS }),
    },
    { additionalProperties: false, default: {} },
  ),
  webhooks: Type.Object(
    {
      allowPrivateAddresses: Type.Boolean({ default: false }),
      timeoutMs: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
      disableAfterFailures: Type.Integer({ minimum: 1, default: 20 }),
    },
    { additionalProperties: false, default: {} },
  ),
})

export type ResolvedOutboxOptions = Static<typeof OutboxOptionsSchema>
