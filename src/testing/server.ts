// The stand-in's HTTP server: each call's step named from its method and path, the key checked (HTTP
// Basic, as EasyPost's client sends it), the call recorded, the faults a test queued applied before or
// after the work, and the answer sent as EasyPost's JSON.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createScanForm, servedFile } from './scan-forms.js'
import { buyShipment, carrierAccounts, convertLabel, createShipment, refundShipment } from './shipments.js'
import { refusal, type Answer, type StandInFault, type StandInObject, type StandInState } from './state.js'

const NOT_FOUND = () => refusal(404, 'NOT_FOUND', 'The requested resource could not be found.')

/** The step a call is (what a fault names) and the shipment id in its path. */
function stepOf(method: string, path: string): { step: string; id?: string } {
  if (path === '/v2/carrier_accounts' && method === 'GET') return { step: 'carrier-accounts' }
  if (path === '/v2/scan_forms' && method === 'POST') return { step: 'scanForm' }
  if (path === '/v2/addresses' && method === 'POST') return { step: 'address' }
  const match = /^\/v2\/shipments(?:\/(shp_[0-9a-f]{32})(?:\/(buy|label|refund))?)?$/.exec(path)
  if (!match) return { step: 'unknown' }
  if (!match[1]) return { step: method === 'POST' ? 'create' : 'list' }
  if (!match[2]) return { step: 'retrieve', id: match[1] }
  return { step: { buy: 'buy', label: 'convert', refund: 'refund' }[match[2]]!, id: match[1] }
}

/** The queued fault for this step (taken once), else a periodic one whose turn it is. */
function takeFault(state: StandInState, step: string): StandInFault | undefined {
  const at = state.faults.findIndex((fault) => fault.step === step)
  let fault = at >= 0 ? state.faults.splice(at, 1)[0] : undefined
  for (const each of state.periodic) {
    if (each.fault.step === step && ++each.seen % each.every === 0) fault ??= each.fault
  }
  return fault
}

/** A fault that answers instead of the work (nothing done), or null to go on. */
function faultBeforeWork(state: StandInState, fault: StandInFault | undefined): Answer | { status: number; html: string } | null {
  if (fault?.kind === 'error') return refusal(fault.status, fault.code, fault.message, fault.retryAfter)
  if (fault?.kind === 'rate-limit') {
    state.stats.rateLimited++
    return refusal(429, 'RATE_LIMITED', 'You have exceeded the rate limit. Please try again later.', fault.retryAfter)
  }
  if (fault?.kind === 'not-json') return { status: fault.status ?? 502, html: fault.body ?? '<html><body>Bad gateway</body></html>' }
  return null
}

/** The work of one authorized call. */
function work(state: StandInState, step: string, id: string | undefined, body: StandInObject, url: URL, origin: string): Answer {
  const shipment = id ? state.shipments.get(id) : undefined
  if (id && !shipment) return NOT_FOUND()
  switch (step) {
    case 'create':
      return createShipment(state, body)
    case 'retrieve':
      return { status: 200, body: shipment }
    case 'buy':
      return buyShipment(state, shipment!, body, origin)
    case 'convert':
      return convertLabel(shipment!, url.searchParams.get('file_format'))
    case 'refund':
      return refundShipment(state, shipment!)
    case 'carrier-accounts':
      return carrierAccounts(state)
    case 'address':
      return { status: 201, body: state.addresses.answer(body) }
    case 'scanForm':
      return createScanForm(state, body, origin)
    default:
      return NOT_FOUND()
  }
}

const sendJson = (response: ServerResponse, answer: Answer) => {
  response.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers })
  response.end(JSON.stringify(answer.body))
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** One call, its body read: a file, or an API call checked, recorded, faulted and answered. */
async function handle(state: StandInState, request: IncomingMessage, response: ServerResponse, raw: string): Promise<void> {
  const method = request.method ?? 'GET'
  const url = new URL(request.url ?? '/', 'http://127.0.0.1')
  const file = servedFile(state, method, url.pathname)
  if (file) return void response.writeHead(file.status, { 'content-type': file.type }).end(file.body)
  let body: StandInObject = {}
  try {
    body = raw ? (JSON.parse(raw) as StandInObject) : {}
  } catch {
    return sendJson(response, refusal(400, 'BAD_REQUEST', 'The request body is not JSON.'))
  }
  const authorized = request.headers.authorization === `Basic ${Buffer.from(`${state.apiKey}:`).toString('base64')}`
  const { step, id } = stepOf(method, url.pathname)
  state.calls.push({ method, path: `${url.pathname}${url.search}`, step, authorized, body, at: Date.now() })
  if (!authorized) return sendJson(response, refusal(401, 'APIKEY.INACTIVE', 'This api key is no longer active. Please use a different api key or reactivate this key.'))
  const fault = takeFault(state, step)
  if (state.settings.latencyMs > 0) await pause(state.settings.latencyMs)
  const instead = faultBeforeWork(state, fault)
  if (instead && 'html' in instead) return void response.writeHead(instead.status, { 'content-type': 'text/html' }).end(instead.html)
  if (instead) return sendJson(response, instead)
  const answer = work(state, step, id, body, url, `http://${request.headers.host ?? '127.0.0.1'}`)
  // A refusal did no work: the faults that come after the work do not apply to it.
  if (answer.status >= 400 || answer.final) return sendJson(response, answer)
  if (fault?.kind === 'error-after-work') return sendJson(response, refusal(fault.status, fault.code, fault.message))
  if (fault?.kind === 'lose-answer') return void request.socket.destroy()
  if (fault?.kind === 'delay') await pause(fault.ms)
  sendJson(response, answer)
}

/** The stand-in's server, listening on a free port of `host`. */
export async function listen(state: StandInState, host: string): Promise<Server> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    state.stats.inFlight++
    state.stats.maxInFlight = Math.max(state.stats.maxInFlight, state.stats.inFlight)
    response.on('close', () => state.stats.inFlight--)
    request.on('end', () => {
      handle(state, request, response, Buffer.concat(chunks).toString('utf8')).catch(() => {
        if (!response.headersSent) sendJson(response, refusal(500, 'INTERNAL_SERVER_ERROR', 'The stand-in failed to answer.'))
        else response.destroy()
      })
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  return server
}
