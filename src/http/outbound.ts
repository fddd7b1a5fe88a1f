// The rules of every request the package makes to an address it was given (webhook receivers, label
// files a provider names): no loopback, private, link-local or metadata address unless the host allows
// them, checked on the address actually connected to (after DNS resolution) and on every redirect.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import { BlockList, isIP, type LookupFunction } from 'node:net'

/**
 * Loopback, private, link-local (the cloud metadata address 169.254.169.254 among them), shared,
 * benchmarking, documentation (TEST-NET-1 to 3, 2001:db8::/32, 3fff::/20), discard-only, IETF
 * protocol, 6to4 relay, reserved and multicast ranges: nothing a host on the public internet has.
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

/** True for an address the package must not reach unless private addresses are allowed. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return privateRanges.check(mapped[1], 'ipv4')
  const family = isIP(address)
  if (family === 0) return true
  return privateRanges.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

/**
 * Why a URL's host is refused before any lookup ("127.0.0.1 is a private address"), or null: an IP
 * literal in the ranges above, or a `localhost` name (RFC 6761: always loopback). Other names are
 * checked on the address they resolve to, when a request connects.
 */
export function privateHostProblem(url: URL): string | null {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) !== 0 && isPrivateAddress(host)) return `${host} is a private address`
  if (/(^|\.)localhost\.?$/i.test(host)) return `${host} is a loopback name`
  return null
}

export class ReceiverRefusedError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ReceiverRefusedError'
  }
}

/** DNS resolution that refuses to hand a private address to the socket. */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, '', 4)
    const list = addresses as LookupAddress[]
    const refused = list.find((entry) => isPrivateAddress(entry.address))
    if (refused) return callback(new ReceiverRefusedError(`${hostname} resolves to a private address (${refused.address})`), '', 4)
    if (options.all) return (callback as unknown as (error: null, addresses: LookupAddress[]) => void)(null, list)
    callback(null, list[0].address, list[0].family)
  })
}

export interface HttpGetRequest {
  url: string
  /** The whole exchange, redirects and body included. */
  timeoutMs: number
  maxBytes: number
  maxRedirects: number
  /** true: any address; a list: these host names (as the URL writes them, without the port) may be private. */
  allowPrivateAddresses: boolean | readonly string[]
  /** Whether a content type (lower case, without parameters; null when none was sent) is taken. */
  acceptsContentType: (contentType: string | null) => boolean
  /** What the messages call the server ("the label's host") and the file ("the label"). */
  what: string
  file: string
}

/**
 * Thrown by `getHttp`: a message that names the host at most, never the URL's path or query (a signed
 * URL carries its credentials there). `refused`: the address or a redirect was refused by the rules.
 */
export class HttpGetError extends Error {
  constructor(
    message: string,
    readonly refused: boolean,
  ) {
    super(message)
    this.name = 'HttpGetError'
  }
}

/**
 * GETs `url` under the rules above: redirects followed one by one (each checked like the first, at
 * most `maxRedirects`: an allowed host cannot lead elsewhere), only http(s), no credentials in the
 * URL, the content type and size bounded, one deadline for it all. Answers the body; throws HttpGetError.
 */
export async function getHttp(request: HttpGetRequest): Promise<Buffer> {
  const deadline = Date.now() + request.timeoutMs
  let url = checkedUrl(request.url, request, 'its URL')
  for (let redirects = 0; ; redirects++) {
    const answer = await getOnce(url, request, deadline)
    if ('location' in answer) {
      if (redirects >= request.maxRedirects) throw new HttpGetError(`${request.what} redirected more than ${request.maxRedirects} times`, true)
      url = checkedUrl(answer.location, request, 'a redirect', url)
      continue
    }
    return answer.body
  }
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase()
const mayBePrivate = (url: URL, request: HttpGetRequest) =>
  request.allowPrivateAddresses === true || (Array.isArray(request.allowPrivateAddresses) && request.allowPrivateAddresses.some((host) => host.toLowerCase() === hostOf(url)))

function checkedUrl(text: string, request: HttpGetRequest, which: string, base?: URL): URL {
  let url: URL
  try {
    url = new URL(text, base)
  } catch {
    throw new HttpGetError(`${which} is not a valid URL`, true)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new HttpGetError(`${which} is not http(s)`, true)
  if (url.username || url.password) throw new HttpGetError(`${which} carries credentials`, true)
  const problem = mayBePrivate(url, request) ? null : privateHostProblem(url)
  if (problem) throw new HttpGetError(`${which} names a host that is not allowed: ${problem}`, true)
  return url
}

function getOnce(url: URL, request: HttpGetRequest, deadline: number): Promise<{ location: string } | { body: Buffer }> {
  const transport = url.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    let settled = false
    const fail = (error: HttpGetError) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      outgoing.destroy()
      reject(error)
    }
    const outgoing = transport.get(url, { lookup: mayBePrivate(url, request) ? undefined : guardedLookup, agent: false }, (response) => {
      const status = response.statusCode ?? 0
      if (status >= 300 && status < 400 && status !== 304) {
        response.resume()
        const location = response.headers.location
        if (!location) return fail(new HttpGetError(`${request.what} answered ${status} without a location`, false))
        settled = true
        clearTimeout(timer)
        outgoing.destroy()
        return resolve({ location })
      }
      if (status < 200 || status >= 300) return fail(new HttpGetError(`${request.what} answered ${status}`, false))
      const contentType = response.headers['content-type']?.split(';')[0]!.trim().toLowerCase() || null
      if (!request.acceptsContentType(contentType)) return fail(new HttpGetError(`${request.what} answered a file of type ${(contentType ?? '').slice(0, 80)}`, false))
      if (Number(response.headers['content-length'] ?? 0) > request.maxBytes) return fail(new HttpGetError(`${request.file} is larger than ${request.maxBytes} bytes`, false))
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > request.maxBytes) return fail(new HttpGetError(`${request.file} is larger than ${request.maxBytes} bytes`, false))
        chunks.push(chunk)
      })
      response.on('end', () => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve({ body: Buffer.concat(chunks) })
      })
      response.on('error', () => fail(new HttpGetError(`${request.what} broke off the answer`, false)))
    })
    const timer = setTimeout(() => fail(new HttpGetError(`${request.what} did not answer within ${request.timeoutMs} ms`, false)), Math.max(0, deadline - Date.now()))
    outgoing.on('error', (error) => {
      if (error instanceof ReceiverRefusedError) return fail(new HttpGetError(`${request.what} is not allowed: ${error.message}`, true))
      fail(new HttpGetError(`${request.what} could not be reached (${(error as NodeJS.ErrnoException).code ?? error.message})`, false))
    })
  })
}
