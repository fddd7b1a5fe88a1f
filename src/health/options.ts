// The health report's options: the opt-in route for load balancers and the thresholds of its warnings.
import { Type, type Static } from '@sinclair/typebox'

/** The plugin options the health report owns. */
export interface HealthOptions {
  /**
   * The health report (`app.shipments.health()`; see docs/operations.md): `path` mounts it as a route for
   * load balancers (default none: opt-in; answered without a user, 200 when ready, 503 when not, never a
   * secret); `outboxLagMs` (default 60000) how late the oldest due outbox message may be before the
   * report warns; `exportSilenceMs` (default 2 h) how long ShipStation may go without fetching the export
   * (when the order exchange is configured) before it warns; `timeoutMs` (default 2000) how long the
   * database has to answer.
   */
  health?: { path?: string | null | undefined; outboxLagMs?: number | undefined; exportSilenceMs?: number | undefined; timeoutMs?: number | undefined } | undefined
}

export const HealthOptionsSchema = Type.Object({
  health: Type.Object(
    {
      path: Type.Union([Type.String({ pattern: '^/[A-Za-z0-9/_.-]*$', maxLength: 200 }), Type.Null()], { default: null }),
      outboxLagMs: Type.Integer({ minimum: 0, default: 60_000 }),
      exportSilenceMs: Type.Integer({ minimum: 0, default: 2 * 60 * 60 * 1000 }),
      timeoutMs: Type.Integer({ minimum: 1, maximum: 60_000, default: 2000 }),
    },
    { additionalProperties: false, default: {} },
  ),
})

export type ResolvedHealthOptions = Static<typeof HealthOptionsSchema>['health']
