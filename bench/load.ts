// The load generator process: autocannon against one URL on loopback; prints its figures as JSON.
import autocannon from 'autocannon'

export interface LoadPlan {
  url: string
  method: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  /** Rotate through these shipment ids, alternating two statuses, so that every request is a real transition. */
  transitions?: { pathPrefix: string; shipmentIds: number[]; statuses: [string, string] }
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

const plan: LoadPlan = JSON.parse(process.argv[2])
let sent = 0

const result = await autocannon({
  url: plan.url,
  method: plan.method,
  headers: plan.headers,
  body: plan.body,
  duration: plan.durationSeconds,
  connections: plan.connections,
  requests: plan.transitions
    ? [
        {
          setupRequest: (request) => {
            const { pathPrefix, shipmentIds, statuses } = plan.transitions!
            const round = Math.floor(sent / shipmentIds.length)
            const id = shipmentIds[sent % shipmentIds.length]
            sent++
            return { ...request, path: `${pathPrefix}/${id}`, body: JSON.stringify({ status: statuses[round % 2] }) }
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
