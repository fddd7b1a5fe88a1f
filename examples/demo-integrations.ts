// The demo host's integrations: the built-in signed-webhook provider and the custom ACME provider.
import type { FastifyInstance } from 'fastify'
import type { IntegrationInput } from '../src/index.js'

/** DEMO ONLY: the signing secret of the `demo-webhooks` integration (base64 of "demo-webhook-secret-change-me"). */
export const DEMO_WEBHOOK_SECRET = 'whsec_ZGVtby13ZWJob29rLXNlY3JldC1jaGFuZ2UtbWU='
/** DEMO ONLY: the bearer token of the `acme-3pl` integration. */
export const DEMO_ACME_TOKEN = 'demo-acme-token-change-me'

export const DEMO_STATUS_MAP = {
  label_created: 'fulfilled',
  picking: 'in_progress',
  packed: 'fulfilled',
  in_transit: 'shipped',
  out_for_delivery: 'shipped',
  delivered: 'shipped',
  exception: 'on_hold',
  on_hold: 'on_hold',
  cancelled: 'cancelled',
} as const

/**
 * Creates the demo integrations when missing. Secrets are read from environment references. Several
 * instances starting at once may both find one missing: the one whose save fails finds it made.
 */
export async function ensureDemoIntegrations(app: FastifyInstance) {
  process.env.DEMO_WEBHOOK_SECRET ??= DEMO_WEBHOOK_SECRET
  process.env.DEMO_ACME_TOKEN ??= DEMO_ACME_TOKEN
  const { integrations } = app.shipments
  const ensure = async (input: IntegrationInput) => {
    if (await integrations.get(input.handle)) return
    try {
      await integrations.create(input)
    } catch (error) {
      if (!(await integrations.get(input.handle))) throw error
    }
  }
  await ensure({
    name: 'Demo signed webhooks',
    handle: 'demo-webhooks',
    providerId: 'signed-webhook',
    settings: { secret: '$DEMO_WEBHOOK_SECRET' },
    statusMap: DEMO_STATUS_MAP,
  })
  await ensure({
    name: 'ACME 3PL',
    handle: 'acme-3pl',
    providerId: 'acme-3pl',
    settings: { token: '$DEMO_ACME_TOKEN' },
    statusMap: { PICKING: 'in_progress', DISPATCHED: 'shipped', HELD: 'on_hold' },
  })
}
