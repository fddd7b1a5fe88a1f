// Standard Webhooks signatures (https://www.standardwebhooks.com): what the outbox signs its deliveries
// with and the signed-webhook provider verifies, in a leaf both layers import.
import { createHmac } from 'node:crypto'

/** The decoded HMAC key; a "whsec_" prefix is not part of it. */
export function signingKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64')
}

/** The `v1,<base64>` signature of a delivery: HMAC-SHA256 over `{id}.{timestamp}.{raw body}`. */
export function signWebhook(secret: string, deliveryId: string, timestamp: number | string, rawBody: Buffer | string): string {
  const hmac = createHmac('sha256', signingKey(secret))
  hmac.update(`${deliveryId}.${timestamp}.`)
  hmac.update(rawBody)
  return `v1,${hmac.digest('base64')}`
}
