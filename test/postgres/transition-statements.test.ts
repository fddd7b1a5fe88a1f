// PostgreSQL only: a status change is two statements (the read, then one statement that locks, re-reads,
// writes the history row, the row and the outbox event), its done mark one; a row that moved between the
// read and the write is read and authorized again; the reads do not depend on pg's global type parsers.
import t from 'tap'
import pg from 'pg'
import { buildTestApp, historyRows, orderWithShipments, postUpdate, shipmentRow } from '../fixtures/app.js'
import { otherConnection, rawQuery } from '../fixtures/database.js'
import { sleep } from '../fixtures/outbox.js'

/** Records the text (or prepared statement name) of every query any pg client of this process sends. */
function recordStatements(t: { teardown(fn: () => unknown): void }) {
  const statements: string[] = []
  const prototype = pg.Client.prototype as unknown as { query: (config: unknown, ...rest: unknown[]) => unknown }
  const original = prototype.query
  prototype.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
    const described = typeof config === 'string' ? config : ((config as { name?: string }).name ?? (config as { text: string }).text)
    statements.push(described.replace(/\s+/g, ' ').trim())
    return original.call(this, config, ...rest)
  }
  t.teardown(() => void (prototype.query = original))
  return statements
}

const pendingEvents = async (app: Parameters<typeof rawQuery>[0]) =>
  (await rawQuery(app, "SELECT count(*)::int AS pending FROM shipments_outbox WHERE state = 'pending'"))[0].pending as number

/** Waits for the batched done mark (no sweep: it would add its own statements). */
async function allDelivered(app: Parameters<typeof rawQuery>[0]) {
  for (let waited = 0; (await pendingEvents(app)) > 0 && waited < 10_000; waited += 20) await sleep(20)
}

t.test('a status change is two statements and its done mark one; a change of fields alone one', async (t) => {
  // No sweep on a timer while statements are counted, nor a renewal of held claims (every fifth of the
  // lease: with the default, one landing between a change and its done mark was counted too).
  const app = await buildTestApp(t, { outbox: { pollIntervalMs: 3_600_000, leaseMs: 3_600_000 } })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const seen: unknown[] = []
  app.shipments.events.on('shipmentStatusChanged', (event) => void seen.push(event))
  // Warm: every pooled connection has what it prepares, nothing of the creation is left to mark done.
  t.equal((await postUpdate(app, id, { status: 'in_progress' })).statusCode, 200)
  await allDelivered(app)

  const statements = recordStatements(t)
  const response = await postUpdate(app, id, { status: 'on_hold', statusMessage: 'Waiting for stock' })
  t.equal(response.statusCode, 200)
  t.equal(response.json().shipment.status, 'on_hold')
  t.same(statements, ['shipments_read_for_change_h1', 'shipments_change_1'], 'the read, then the change in one statement')
  await allDelivered(app)
  t.same(statements.slice(2).filter((text) => !text.includes('count(*)::int AS pending')), ['shipments_outbox_done_1'], 'the done mark: one statement')

  const history = await historyRows(app, id)
  t.same(
    history.slice(-1).map((row) => [row.fromStatus, row.toStatus, row.message]),
    [['in_progress', 'on_hold', 'Waiting for stock']],
  )
  t.equal(seen.length, 2)
  t.match(seen[1], { from: 'in_progress', to: 'on_hold', historyId: history.at(-1)!.id, shipment: { id, status: 'on_hold' } })

  statements.length = 0
  const fields = await postUpdate(app, id, { carrier: 'UPS' })
  t.equal(fields.statusCode, 200)
  t.equal(statements.length, 1, 'an update without a status change: one UPDATE ... RETURNING')
  t.equal((await shipmentRow(app, id)).carrier, 'UPS')
})

t.test('a row changed by another instance between the read and the write is read and authorized again', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const other = await otherConnection(t, app)
  const authorized: string[] = []
  const result = await app.shipments.shipments.update(
    id,
    { status: 'in_progress' },
    {
      authorizeTransition: async (from) => {
        authorized.push(from)
        // The first time, another instance moves the shipment (and its carrier) after the read.
        if (authorized.length === 1) await other("UPDATE shipments_shipments SET status = 'on_hold', carrier = 'DHL' WHERE id = $1", [id])
      },
    },
  )
  t.same(authorized, ['new', 'on_hold'], 'authorized against the row as it was read, then as it is')
  t.same(result.transition, { from: 'on_hold', to: 'in_progress', historyId: result.transition!.historyId })
  t.equal(result.shipment.carrier, 'DHL', "the other instance's change is kept")
  const row = await shipmentRow(app, id)
  t.equal(row.status, 'in_progress')
  t.equal(row.carrier, 'DHL')
  t.same((await historyRows(app, id)).map((entry) => [entry.fromStatus, entry.toStatus]), [[null, 'new'], ['on_hold', 'in_progress']], 'one history row for the one transition')
})

t.test("a change while pg's global type parsers return text still reads dates, booleans and JSON", async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  // A host may set these for its own queries; the package's raw reads bring their own.
  const oids = [16, 23, 114, 1184]
  const originals = oids.map((oid) => pg.types.getTypeParser(oid))
  for (const oid of oids) pg.types.setTypeParser(oid, (value: string) => value)
  t.teardown(() => oids.forEach((oid, index) => pg.types.setTypeParser(oid, originals[index])))
  const result = await app.shipments.shipments.update(id, { status: 'in_progress' })
  t.equal(result.shipment.status, 'in_progress')
  t.equal(result.shipment.enabled, true)
  t.match(result.shipment.dateCreated, /^\d{4}-\d{2}-\d{2}T/)
  t.same(result.shipment.fields, {})
  t.equal(typeof result.transition!.historyId, 'number')
})
