// An event's `sequence` (its outbox id) follows commit order per shipment: one shipment's carrier
// milestones and status changes, written at the same moment in transactions of their own, reach a
// webhook receiver with increasing sequences, so a receiver that ignores what is older than what it
// applied drops none (issue 45, item 18: on PostgreSQL a milestone took its id before a status change
// and committed after it).
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { buildTestApp, orderWithShipments } from './fixtures/app.js'
import { rawQuery, testDatabase } from './fixtures/database.js'
import { eventually } from './fixtures/outbox.js'

const ROUNDS = 40

t.test("one shipment's milestones and status changes raced at once reach a webhook receiver in increasing sequence", async (t) => {
  // The receiver keeps what arrives, in arrival order.
  const received: Array<{ type: string; sequence: number; id: string }> = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString()) as (typeof received)[number])
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const app = await buildTestApp(t, { outbox: { pollIntervalMs: 20 }, webhooks: { allowPrivateAddresses: true } }, await testDatabase(t, 'sequence'))
  await app.shipments.webhooks.create({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, events: ['carrierMilestone', 'shipmentStatusChanged'] })
  const {
    shipmentIds: [id],
  } = await orderWithShipments(app)

  // Every round: a new out-for-delivery scan (a milestone, in a transaction of its own) and a status
  // change, all rounds at once.
  const writes: Array<Promise<unknown>> = []
  for (let round = 0; round < ROUNDS; round++) {
    const occurredAt = new Date(Date.UTC(2026, 10, 22, 8, round))
    writes.push(
      app.shipments.shipments.recordCheckpoints(id, {
        trackingNumber: '1Z999AA10123456784',
        source: 'carrier',
        checkpoints: [{ occurredAt, occurredAtText: occurredAt.toISOString(), message: `Out for delivery, attempt ${round}`, status: 'out_for_delivery' }],
      }),
      app.shipments.shipments.update(id, { status: round % 2 === 0 ? 'on_hold' : 'in_progress' }),
    )
  }
  const outcomes = await Promise.allSettled(writes)
  t.same(
    outcomes.filter((outcome) => outcome.status === 'rejected'),
    [],
    'every write commits',
  )

  const written = await rawQuery(app, "SELECT id, name FROM shipments_outbox WHERE kind = 'event' AND ordering_key = ? AND name IN ('carrierMilestone', 'shipmentStatusChanged') ORDER BY id", [`shipment:${id}`])
  t.equal(written.filter((row) => row.name === 'carrierMilestone').length, ROUNDS, 'a milestone per new scan')
  await eventually(app, () => received.length >= written.length, 30_000)
  t.equal(received.length, written.length, 'every event reached the receiver')
  const backwards = received.filter((body, index) => index > 0 && body.sequence <= received[index - 1].sequence)
  t.same(backwards, [], 'each arrives with a sequence above the one before it')
  t.same(
    received.map((body) => body.sequence),
    written.map((row) => Number(row.id)),
    'in sequence order, each event once',
  )
})
