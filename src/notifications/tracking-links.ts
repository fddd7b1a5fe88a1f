// Public tracking links: an unguessable, revocable URL per shipment, no login. The token is the shipment
// id enciphered (one AES block, so the link shows no internal id and consecutive shipments' links share
// nothing) and an HMAC over the id and the link's version; revoking raises the version, so earlier links fail.
import { createCipheriv, createDecipheriv, createHmac, timingSafeEqual } from 'node:crypto'
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
/** One AES block: the id in its first 4 bytes, zeros after (a token whose block does not decipher so is refused unread). */
const BLOCK_BYTES = 16
const TOKEN = /^([A-Za-z0-9_-]{22})-([A-Za-z0-9_-]{32})$/

export type TrackingLinks = ReturnType<typeof createTrackingLinks>

export function createTrackingLinks(store: NotificationStore, options: TrackingLinkOptions) {
  // Separate keys for hiding the id and for signing, both derived from the one secret.
  const idKey = createHmac('sha256', options.secret).update('tracking-link.id-key').digest()
  const mac = (shipmentId: number, version: number) =>
    createHmac('sha256', options.secret).update(`tracking-link.${shipmentId}.${version}`).digest('base64url').slice(0, MAC_LENGTH)

  // ECB over a single block is a keyed permutation of the id: deterministic, and nothing repeats within a token.
  const hideId = (shipmentId: number) => {
    const block = Buffer.alloc(BLOCK_BYTES)
    block.writeUInt32BE(shipmentId, 0)
    const cipher = createCipheriv('aes-256-ecb', idKey, null).setAutoPadding(false)
    return Buffer.concat([cipher.update(block), cipher.final()]).toString('base64url')
  }
  const revealId = (hidden: string): number | null => {
    const bytes = Buffer.from(hidden, 'base64url')
    if (bytes.length !== BLOCK_BYTES) return null
    const decipher = createDecipheriv('aes-256-ecb', idKey, null).setAutoPadding(false)
    const block = Buffer.concat([decipher.update(bytes), decipher.final()])
    if (block.subarray(4).some((byte) => byte !== 0)) return null
    const shipmentId = block.readUInt32BE(0)
    return shipmentId >= 1 && shipmentId <= 2_147_483_647 ? shipmentId : null
  }

  const tokenFor = (shipmentId: number, version: number) => `${hideId(shipmentId)}-${mac(shipmentId, version)}`
  const linkTo = (token: string) => new URL(`${options.prefix}/${token}`, options.baseUrl).toString()

  return {
    /** The shipment's link as it is now (absolute). */
    async url(shipmentId: number): Promise<string> {
      return linkTo(tokenFor(shipmentId, await store.trackingLinkVersion(shipmentId)))
    },

    /** Every link given out before stops working; returns the new link. */
    async revoke(shipmentId: number): Promise<string> {
      return linkTo(tokenFor(shipmentId, await store.revokeTrackingLink(shipmentId)))
    },

    /** The shipment a token names, or null for a token forged, malformed or revoked. */
    async verify(token: string): Promise<number | null> {
      const match = TOKEN.exec(token)
      const shipmentId = match ? revealId(match[1]!) : null
      // One spelling per link: base64url's last character carries bits the block does not use.
      if (shipmentId === null || hideId(shipmentId) !== match![1]) return null
      const expected = Buffer.from(mac(shipmentId, await store.trackingLinkVersion(shipmentId)))
      const given = Buffer.from(match![2]!)
      return given.length === expected.length && timingSafeEqual(given, expected) ? shipmentId : null
    },
  }
}
