// Public tracking links: an unguessable, revocable URL per shipment, no login. The token is the shipment id
// and an HMAC over the id and the link's version; revoking raises the version, so earlier links fail.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { NotificationStore } from '../db/data-layer.js'

export interface TrackingLinkOptions {
  /** The signing key, at least 32 characters. */
  secret: string
  /** The site's origin for absolute links (in mails), e.g. `https://shop.example`. */
  baseUrl: string
  /** Where the page is mounted. */
  prefix: string
}

const MAC_LENGTH = 32 // base64url characters: 192 bits

export type TrackingLinks = ReturnType<typeof createTrackingLinks>

export function createTrackingLinks(store: NotificationStore, options: TrackingLinkOptions) {
  const mac = (shipmentId: number, version: number) =>
    createHmac('sha256', options.secret).update(`tracking-link.${shipmentId}.${version}`).digest('base64url').slice(0, MAC_LENGTH)

  const tokenFor = (shipmentId: number, version: number) => `${shipmentId.toString(36)}-${mac(shipmentId, version)}`

  return {
    /** The shipment's link as it is now (absolute). */
    async url(shipmentId: number): Promise<string> {
      const token = tokenFor(shipmentId, await store.trackingLinkVersion(shipmentId))
      return new URL(`${options.prefix}/${token}`, options.baseUrl).toString()
    },

    /** Every link given out before stops working; returns the new link. */
    async revoke(shipmentId: number): Promise<string> {
      const version = await store.revokeTrackingLink(shipmentId)
      return new URL(`${options.prefix}/${tokenFor(shipmentId, version)}`, options.baseUrl).toString()
    },

    /** The shipment a token names, or null for a token forged, malformed or revoked. */
    async verify(token: string): Promise<number | null> {
      const match = /^([0-9a-z]{1,11})-([A-Za-z0-9_-]{32})$/.exec(token)
      if (!match) return null
      const shipmentId = parseInt(match[1], 36)
      if (!Number.isSafeInteger(shipmentId) || shipmentId < 1 || shipmentId > 2_147_483_647) return null
      const expected = Buffer.from(mac(shipmentId, await store.trackingLinkVersion(shipmentId)))
      const given = Buffer.from(match[2])
      return given.length === expected.length && timingSafeEqual(given, expected) ? shipmentId : null
    },
  }
}
