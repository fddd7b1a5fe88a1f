// The load generator process: autocannon against one URL on loopback; prints its figures as JSON.
import autocannon from 'autocannon'
import { signedTrackerEvent } from './easypost-event.js'

export interface LoadPlan {
  url: string
  method: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  /** Rotate through these shipment ids, alternating two statuses, so that every request is a real transition. */
  transitions?: { pathPrefix: string; shipmentIds: number[]; statuses: [string, string] }
  /** Rotate the path through `${pathPrefix}/${id}${pathSuffix}` (with `bodies[i]` for `ids[i]` when given, else the plan's body). */
  rotate?: { pathPrefix: string; pathSuffix?: string; ids: number[]; bodies?: string[] }
  /**
   * Signed EasyPost `tracker.updated` events, each with a new event id and the current time, for the
   * tracking codes in turn; each code's status alternates between the two at each pass, the first pass
   * starting with the first status for even positions and the second for odd ones.
   */
  easyPost?: { secret: string; trackingCodes: string[]; carrier: string; statuses: [string, string] }
  durationSeconds: number
  connections: number
}

export interface LoadResult {
  requestsPerSecond: number
  latencyMeanMs: number
  latencyP99Ms: number
  requests: number
  errors: number
  non2xx: number
}

// On stdin: a rotation's bodies can pass the 128 KiB a single argument may hold.
const chunks: Buffer[] = []
for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
const plan: LoadPlan = JSON.parse(Buffer.concat(chunks).toString('utf8'))
let sent = 0

/** The request's path and body for the plan's rotation, or undefined for the plan's own. */
function nextRequest(): { path: string; body: string; headers?: Record<string, string> } | undefined {
  const index = sent++
  if (plan.transitions) {
    const { pathPrefix, shipmentIds, statuses } = plan.transitions
    const round = Math.floor(index / shipmentIds.length)
    return { path: `${pathPrefix}/${shipmentIds[index % shipmentIds.length]}`, body: JSON.stringify({ status: statuses[round % 2] }) }
  }
  if (plan.rotate) {
    const { pathPrefix, pathSuffix = '', ids, bodies } = plan.rotate
    return { path: `${pathPrefix}/${ids[index % ids.length]}${pathSuffix}`, body: bodies ? bodies[index % ids.length] : (plan.body ?? '') }
  }
  if (plan.easyPost) {
    const { trackingCodes, carrier, statuses } = plan.easyPost
    const code = trackingCodes[index % trackingCodes.length]
    // Each shipment alternates at every pass, and neighbours go opposite ways: events move shipments
    // both ways at once, as the replay's two scripts do (see figures/postgres-replay.ts).
    const status = statuses[(index + Math.floor(index / trackingCodes.length)) % 2]
    const { body, signature } = signedTrackerEvent(plan.easyPost.secret, { id: `evt_bench_${process.pid}_${index}`, trackingCode: code, carrier, status })
    const path = new URL(plan.url).pathname + new URL(plan.url).search
    return { path, body, headers: { ...plan.headers, 'x-hmac-signature': signature } }
  }
  return undefined
}

const result = await autocannon({
  url: plan.url,
  method: plan.method,
  headers: plan.headers,
  body: plan.body,
  duration: plan.durationSeconds,
  connections: plan.connections,
  requests:
    plan.transitions || plan.rotate || plan.easyPost
      ? [
          {
            setupRequest: (request) => {
              const next = nextRequest()!
              return { ...request, path: next.path, body: next.body, ...(next.headers ? { headers: next.headers } : {}) }
            },
          },
        ]
      : undefined,
})

const summary: LoadResult = {
  requestsPerSecond: result.requests.average,
  latencyMeanMs: result.latency.average,
  latencyP99Ms: result.latency.p99,
  requests: result.requests.total,
  errors: result.errors,
  non2xx: result.non2xx,
}
process.stdout.write(JSON.stringify(summary) + '\n')
