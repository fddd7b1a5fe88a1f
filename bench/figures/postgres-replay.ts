// The PostgreSQL ceilings of the write figures: the package's own statements for the same work,
// captured on a replay host and replayed by pgbench; and pgbench's TPC-B-like transactions as context.
import { randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { captureRequest } from '../sql-capture.js'
import { pgbenchScript, type ScriptRequest } from '../pgbench-script.js'
import { rawStatement, startHost } from '../hosts.js'
import { compare, contextLine, pgbenchDatabase, type PgbenchPlan } from '../runner.js'
import { CONNECTIONS, RESULTS_FILE, SECONDS, wanted, type Engine, type Label } from '../settings.js'
import { easyPostEvent, seedShipments, type WriteLoads } from './requests.js'

/**
 * Statements the package sends in a request's async context that are not the request's own work: an
 * outbox delivery's done mark (one statement for a batch of delivered events, started by an earlier
 * commit) and the read of the change stamp (at most every 250 ms, whatever the load).
 */
const NOT_PER_REQUEST = [/^\s*UPDATE shipments_outbox SET state = 'done'/, /FROM shipments_change_seq\s*$/]

/**
 * Sends two requests of one kind through `host` (for `ids[0]` and `ids[1]`), captures the statements
 * the package sent for each, and writes them as a pgbench script over the shipments `first`..`last`.
 * The host is the replay's own (its database the one the script runs against), not the measured one.
 */
async function replayScript(app: FastifyInstance, kind: string, request: (id: number, index: number) => { url: string; body: string; headers?: Record<string, string> }, ids: number[]) {
  const send = async (id: number, index: number) => {
    const { url, body, headers } = request(id, index)
    const { response, statements } = await captureRequest(app, { method: 'POST', url, payload: body, headers: { 'content-type': 'application/json', 'x-bench-user': 'admin', ...headers } })
    if (response.statusCode !== 200) throw new Error(`capturing ${kind}: ${url} answered ${response.statusCode} ${response.body}`)
    return { id, statements: statements.filter((statement) => !NOT_PER_REQUEST.some((pattern) => pattern.test(statement.text))) }
  }
  // The first request fills the caches (the integration, the change stamp): a warm request is what the load sends.
  await send(ids.at(-1)!, 0)
  // Two requests for other shipments that sent the same statements: a delivery's done mark can fall
  // inside either (it is filtered out above, but a cache refresh may not be), so up to five tries.
  let requests: ScriptRequest[] = []
  for (let attempt = 0; attempt < 5; attempt++) {
    // Shipments far apart in the set, so of different orders, written by different transactions: their
    // row versions differ, which tells the generator the version is per request (carried, not a literal).
    const half = Math.floor(ids.length / 2)
    requests = [await send(ids[attempt], 1), await send(ids[half + attempt], 2)]
    if (JSON.stringify(requests[0].statements.map((each) => each.text)) === JSON.stringify(requests[1].statements.map((each) => each.text))) break
  }
  // The script's `\set id random(first, last)` stands for the set: it must hold every id between.
  const sorted = [...ids].sort((a, b) => a - b)
  if (sorted.some((id, index) => id !== sorted[0] + index)) throw new Error(`${kind}: the shipments of the replay are not consecutive ids`)
  const script = pgbenchScript(requests, { first: sorted[0], last: sorted.at(-1)! })
  // Beside the results (kept after the run, to read what was replayed).
  const file = join(RESULTS_FILE, '..', `replay-${kind}.sql`)
  mkdirSync(join(RESULTS_FILE, '..'), { recursive: true })
  writeFileSync(file, script)
  console.log(`  (replay of ${kind}: ${requests[0].statements.length} statements a request, script ${file})`)
  return { file, script, statements: requests[0].statements.length }
}

export async function measurePostgresCeilings(
  engine: Engine,
  label: Label,
  shipmentIds: number[],
  { fieldsBody, statusChanges, fieldUpdates, carrierEvents }: WriteLoads,
) {
  // The ceiling on PostgreSQL: the package's own statements for the same work, captured from a
  // replay host (a database seeded alike) and replayed by pgbench with as many clients as the load
  // has connections, for random shipments of the same set, against the same server.
  const names = {
    status: label("status changes per second / pgbench replaying the package's own statements (same server, same clients)"),
    update: label("updates without a status change per second / pgbench replaying the package's own statements"),
    events: label("EasyPost events applied per second / pgbench replaying the package's own statements"),
  }
  if (Object.values(names).some(wanted)) {
    const replayShipments: number[] = []
    const replayTracked: number[] = []
    const replay = await startHost(engine, 'replay', {}, (app) => seedShipments(app, replayShipments, replayTracked))
    if (JSON.stringify(replayShipments) !== JSON.stringify(shipmentIds)) throw new Error('the replay database holds other shipment ids than the measured one')
    const apiUrl = (id: number) => `/shipments/api/shipments/${id}`
    const eventRequest = (id: number, status: string) => {
      // A UUID for the event id: the script makes a new one for every transaction (the ledger's key).
      const { body, headers } = easyPostEvent(id, status, randomUUID())
      return { url: '/actions/shipments/gateway/handle?integration=easypost', body, headers }
    }
    const scripts = {
      status: await replayScript(replay.app, 'status-change', (id) => ({ url: apiUrl(id), body: JSON.stringify({ status: 'in_progress' }) }), replayShipments),
      update: await replayScript(replay.app, 'update', (id) => ({ url: apiUrl(id), body: fieldsBody }), replayShipments),
      // The load alternates the two (each pass over the shipments moves them all one way), so the
      // replay runs both scripts with equal weight: to on hold, and back to shipped (the order moved too).
      events: await replayScript(replay.app, 'easypost-event-on-hold', (id) => eventRequest(id, 'return_to_sender'), replayTracked),
      eventsShipped: await (async () => {
        await rawStatement(replay.app, `UPDATE shipments_shipments SET status = 'on_hold' WHERE id BETWEEN $1 AND $2`, [replayTracked[0], replayTracked.at(-1)])
        return replayScript(replay.app, 'easypost-event-shipped', (id) => eventRequest(id, 'in_transit'), replayTracked)
      })(),
    }
    const url = replay.database
    await replay.app.close()
    const replayPlan = (...kinds: Array<keyof typeof scripts>): PgbenchPlan => ({
      pgbench: {
        url,
        clients: CONNECTIONS,
        threads: Math.min(2, CONNECTIONS),
        durationSeconds: SECONDS,
        script: { files: kinds.map((kind) => scripts[kind].file), describe: `replay of the package's statements (${kinds.map((kind) => `${kind}: ${scripts[kind].statements}`).join(', ')})` },
      },
    })
    await compare(names.status, { min: 0.8 }, statusChanges, replayPlan('status'))
    await compare(names.update, { min: 0.8 }, fieldUpdates, replayPlan('update'))
    await compare(names.events, { min: 0.8 }, carrierEvents, replayPlan('events', 'eventsShipped'))
  }
  // What the server does with pgbench's own TPC-B-like transactions (BEGIN, three UPDATEs, a
  // SELECT, an INSERT, END), with as many clients: context, not a target. At scale 1 all clients
  // update one pgbench_branches row and queue behind each other; at scale 10 they spread over ten.
  for (const scale of [1, 10]) {
    const name = label(`pgbench TPC-B-like, scale ${scale}, ${CONNECTIONS} clients`)
    if (wanted(name)) await contextLine(name, { pgbench: { url: await pgbenchDatabase(scale), clients: CONNECTIONS, threads: Math.min(2, CONNECTIONS), durationSeconds: SECONDS } })
  }
}
