// One outbound HTTP POST with a hard timeout, refusing private and loopback receivers unless allowed:
// the address is checked after DNS resolution, on the address actually connected to.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import { BlockList, isIP, type LookupFunction } from 'node:net'

/**
 * Loopback, private, link-local, shared, benchmarking, documentation (TEST-NET-1 to 3, 2001:db8::/32,
 * 3fff::/20), discard-only, IETF protocol, 6to4 relay, reserved and multicast ranges: nothing a
 * receiver on the public internet has.
 */
const privateRanges = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  privateRanges.addSubnet(network, prefix, 'ipv4')
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['3fff::', 20],
] as const) {
  privateRanges.addSubnet(network, prefix, 'ipv6')
}

/** True for an address a webhook must not reach unless private receivers are allowed. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return privateRanges.check(mapped[1], 'ipv4')
  const family = isIP(address)
  if (family === 0) return true
  return privateRanges.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

/**
 * Why a receiver URL is refused before any lookup, or null: an IP literal in the ranges above, or a
 * `localhost` name (RFC 6761: always loopback). Other names are checked on the address they resolve
 * to, when a delivery connects.
 */
export function privateReceiverProblem(url: URL): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) !== 0 && isPrivateAddress(host)) return `The receiver ${host} is a private address.`
  if (/(^|\.)localhost\.?$/i.test(host)) return `The receiver ${host} is a loopback name.`
  return null
}

export class ReceiverRefusedError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ReceiverRefusedError'
  }
}

/** DNS resolution that refuses to hand a private address to the socket. */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 4)
    const list = addresses as LookupAddress[]
    const refused = list.find((entry) => isPrivateAddress(entry.address))
    if (refused) return callback(new ReceiverRefusedError(`${hostname} resolves to a private address (${refused.address})`), '', 4)
    if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, list)
    callback(null, list[0].address, list[0].family)
  })
}

export interface HttpDeliveryRequest {
  url: string
  headers: Record<string, string>
  body: string
  timeoutMs: number
  allowPrivateAddresses: boolean
}

export interface HttpDeliveryResult {
  /** The receiver's status, or null when no answer came (refused, timed out, connection failed). */
  statusCode: number | null
  /** Why it did not succeed; null for a 2xx. */
  error: string | null
  /** True when trying again cannot help (a refused address, a malformed URL). */
  permanent: boolean
}

/** POSTs `body`; answers with what happened, never throws. A response body is read up to 4 KiB and dropped. */
export function postHttp(request: HttpDeliveryRequest): Promise<HttpDeliveryResult> {
  let url: URL
  try {
    url = new URL(request.url)
  } catch {
    return Promise.resolve({ statusCode: null, error: 'The URL is not valid.', permanent: true })
  }
  const refused = request.allowPrivateAddresses ? null : privateReceiverProblem(url)
  if (refused) return Promise.resolve({ statusCode: null, error: refused, permanent: true })
  const transport = url.protocol === 'https:' ? https : http
  return new Promise((resolve) => {
    let settled = false
    const finish = (result: HttpDeliveryResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(result)
    }
    const outgoing = transport.request(
      url,
      {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        lookup: request.allowPrivateAddresses ? undefined : guardedLookup,
        agent: false,
      },
      (response) => {
        let received = 0
        response.on('data', (chunk: Buffer) => {
          received += chunk.length
          if (received > 4096) response.destroy()
        })
        const status = response.statusCode ?? 0
        const answer = () =>
          finish({ statusCode: status, error: status >= 200 && status < 300 ? null : `The receiver answered ${status}.`, permanent: false })
        response.on('end', answer)
        response.on('close', answer)
        response.on('error', answer)
      },
    )
    // The whole exchange, connection included, within the timeout.
    const timer = setTimeout(() => {
      outgoing.destroy()
      finish({ statusCode: null, error: `No answer within ${request.timeoutMs} ms.`, permanent: false })
    }, request.timeoutMs)
    outgoing.on('error', (error) => {
      const refused = error instanceof ReceiverRefusedError
      finish({ statusCode: null, error: refused ? error.message : `Could not reach the receiver: ${error.message}`, permanent: refused })
    })
    outgoing.end(request.body)
  })
}
