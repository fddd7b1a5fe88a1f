// Public tracking links: an unguessable, revocable URL per shipment, no login. The token is the shipment
// id enciphered (one AES block, so the link shows no internal id and consecutive shipments' links share
// nothing) and an HMAC over the id and the link's version; revoking raises the version, so earlier links fail.
// A return started by its customer gets a link of the same kind, under keys of its own (`return-link.`),
// so a shipment's token never opens a return and the reverse.
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

/**
 * Tokens of one key space (`namespace`): the id hidden by a key derived for it, and an HMAC over the id
 * and `version` (what the id's links are at now).
 */
function signedIds(secret: string, namespace: string) {
  // Separate keys for hiding the id and for signing, both derived from the one secret.
  const idKey = createHmac('sha256', secret).update(`${namespace}.id-key`).digest()
  const mac = (id: number, version: number | null) =>
    createHmac('sha256', secret)
      .update(version === null ? `${namespace}.${id}` : `${namespace}.${id}.${version}`)
      .digest('base64url')
      .slice(0, MAC_LENGTH)

  // ECB over a single block is a keyed permutation of the id: deterministic, and nothing repeats within a token.
  const hideId = (id: number) => {
    const block = Buffer.alloc(BLOCK_BYTES)
    block.writeUInt32BE(id, 0)
    const cipher = createCipheriv('aes-256-ecb', idKey, null).setAutoPadding(false)
    return Buffer.concat([cipher.update(block), cipher.final()]).toString('base64url')
  }
  const revealId = (hidden: string): number | null => {
    const bytes = Buffer.from(hidden, 'base64url')
    if (bytes.length !== BLOCK_BYTES) return null
    const decipher = createDecipheriv('aes-256-ecb', idKey, null).setAutoPadding(false)
    const block = Buffer.concat([decipher.update(bytes), decipher.final()])
    if (block.subarray(4).some((byte) => byte !== 0)) return null
    const id = block.readUInt32BE(0)
    return id >= 1 && id <= 2_147_483_647 ? id : null
  }

  return {
    tokenFor: (id: number, version: number | null) => `${hideId(id)}-${mac(id, version)}`,
    /** The id a token names when its signature holds for the id's current `versionOf`, else null. */
    async verify(token: string, versionOf: (id: number) => number | null | Promise<number | null>): Promise<number | null> {
      const match = TOKEN.exec(token)
      const id = match ? revealId(match[1]!) : null
      // One spelling per link: base64url's last character carries bits the block does not use.
      if (id === null || hideId(id) !== match![1]) return null
      const expected = Buffer.from(mac(id, await versionOf(id)))
      const given = Buffer.from(match![2]!)
      return given.length === expected.length && timingSafeEqual(given, expected) ? id : null
    },
  }
}

export function createTrackingLinks(store: NotificationStore, options: TrackingLinkOptions) {
  const shipmentTokens = signedIds(options.secret, 'tracking-link')
  // Return pages are not revoked (no version): a return's link is only ever given to the customer who started it.
  const returnTokens = signedIds(options.secret, 'return-link')
  const linkTo = (path: string) => new URL(`${options.prefix}/${path}`, options.baseUrl).toString()

  return {
    /** The shipment's link as it is now (absolute). */
    async url(shipmentId: number): Promise<string> {
      return linkTo(shipmentTokens.tokenFor(shipmentId, await store.trackingLinkVersion(shipmentId)))
    },

    /** Every link given out before stops working; returns the new link. */
    async revoke(shipmentId: number): Promise<string> {
      return linkTo(shipmentTokens.tokenFor(shipmentId, await store.revokeTrackingLink(shipmentId)))
    },

    /** The shipment a token names, or null for a token forged, malformed or revoked. */
    verify: (token: string): Promise<number | null> => shipmentTokens.verify(token, (id) => store.trackingLinkVersion(id)),

    /** A return's own page (absolute), under `<prefix>/returns/`. */
    returnUrl: (returnId: number): string => linkTo(`returns/${returnTokens.tokenFor(returnId, null)}`),

    /** The return a return page's token names, or null for a token forged or malformed (a shipment's token included). */
    verifyReturn: (token: string): Promise<number | null> => returnTokens.verify(token, () => null),
  }
}
