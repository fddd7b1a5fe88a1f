// One outbound HTTP POST with a hard timeout, refusing private and loopback receivers unless allowed:
// the address is checked after DNS resolution, on the address actually connected to.
import http from 'node:http'
import https from 'node:https'
import { guardedLookup, privateHostProblem, ReceiverRefusedError } from '../http/outbound.js'

/**
 * Why a receiver URL is refused before any lookup, or null (see privateHostProblem): other names are
 * checked on the address they resolve to, when a delivery connects.
 */
export function privateReceiverProblem(url: URL): string | null {
  const problem = privateHostProblem(url)
  return problem && `The receiver ${problem}.`
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
