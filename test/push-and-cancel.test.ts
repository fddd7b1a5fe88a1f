// Provider push and cancel (automatic on chosen statuses, or on demand; retried when the provider says
// so; one at a time per shipment), the outbound status map, and shipments cancelled and restored with
// their order.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { defineProvider, IntegrationError, type PushRequest } from '../src/index.js'
import { buildTestApp, historyRows, insertOrder, orderWithShipments, postUpdate, shipmentRow } from './fixtures/app.js'
import { eventually, sleep } from './fixtures/outbox.js'

/** A 3PL provider whose push answers as `behaviour` says, recording every call. */
function warehouseProvider(behaviour: (call: number, request: PushRequest) => Promise<void> | void) {
  const calls: Array<{ action: 'push' | 'cancel'; request: PushRequest }> = []
  let inFlight = 0
  let mostAtOnce = 0
  const run = async (action: 'push' | 'cancel', request: PushRequest) => {
    calls.push({ action, request })
    inFlight++
    mostAtOnce = Math.max(mostAtOnce, inFlight)
    try {
      await behaviour(calls.length, request)
      return { externalId: `WH-${request.shipment.id}`, externalUrl: `https://wh.example/s/${request.shipment.id}` }
    } finally {
      inFlight--
    }
  }
  const provider = defineProvider({
    id: 'warehouse',
    settingsSchema: Type.Object({ token: Type.String() }),
    secretSettings: ['token'],
    handleGatewayRequest: async () => ({ status: 204 }),
    pushShipment: (request) => run('push', request),
    cancelShipment: (request) => run('cancel', request),
  })
  return { provider, calls, mostAtOnce: () => mostAtOnce }
}

const options = (provider: ReturnType<typeof warehouseProvider>['provider']) => ({
  providers: [provider],
  outbox: { pollIntervalMs: 20, retryDelaysMs: [20, 20, 20] },
})

t.test('reaching a status an integration pushes on pushes the shipment with its outbound code; retryable failures are retried', async (t) => {
  const warehouse = warehouseProvider((call) => {
    if (call <= 2) throw new IntegrationError('The warehouse is busy (503).', { retryable: true })
  })
  const app = await buildTestApp(t, options(warehouse.provider))
  await app.shipments.integrations.create({
    name: 'Warehouse',
    handle: 'wh',
    providerId: 'warehouse',
    settings: { token: 't' },
    outboundStatusMap: { fulfilled: 'READY_TO_SHIP' },
    pushOn: ['fulfilled'],
  })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  await postUpdate(app, id, { status: 'in_progress' })
  t.equal(warehouse.calls.length, 0, 'no push for a status not chosen')
  t.equal((await postUpdate(app, id, { status: 'fulfilled' })).statusCode, 200)
  await eventually(app, async () => (await app.shipments.integrations.externalReferences(id))[0]?.lastPushError === null)

  t.equal(warehouse.calls.length, 3, 'two retryable failures, then success')
  t.match(warehouse.calls[0].request, { shipment: { id, status: 'fulfilled' }, externalStatus: 'READY_TO_SHIP', externalId: null })
  t.match(await app.shipments.integrations.externalReferences(id), [
    { integrationHandle: 'wh', externalId: `WH-${id}`, externalUrl: `https://wh.example/s/${id}`, lastPushError: null, pushAttempts: 3, lastPushAt: /^\d{4}-/ },
  ])
  const [job] = await app.shipments.outbox.list({ kind: 'job', name: 'integrationPush' })
  t.match(await app.shipments.outbox.get(job.id), { state: 'done', attempts: 3, attemptLog: [{ error: null }, { error: 'The warehouse is busy (503).' }, { error: 'The warehouse is busy (503).' }] })

  // A later push sends what it knows of the shipment there.
  const again = await app.shipments.pushes.push('wh', id)
  t.same(again, { state: 'done', error: null, nextAttemptAt: null, attempts: 1 })
  t.match(warehouse.calls[3].request, { externalId: `WH-${id}`, externalUrl: `https://wh.example/s/${id}` })
})

t.test('a failure not marked retryable stops the push, recorded on the external reference', async (t) => {
  const warehouse = warehouseProvider(() => {
    throw new IntegrationError('Unknown SKU.')
  })
  const app = await buildTestApp(t, options(warehouse.provider))
  await app.shipments.integrations.create({ name: 'Warehouse', handle: 'wh', providerId: 'warehouse', settings: { token: 't' } })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const outcome = await app.shipments.pushes.push('wh', id)
  t.same(outcome, { state: 'failed', error: 'Unknown SKU.', nextAttemptAt: null, attempts: 1 })
  await sleep(100)
  t.equal(warehouse.calls.length, 1, 'not retried')
  t.match(await app.shipments.integrations.externalReferences(id), [{ integrationHandle: 'wh', externalId: null, lastPushError: 'Unknown SKU.', pushAttempts: 1 }])

  const retrying = warehouseProvider(() => {
    throw new IntegrationError('Timed out.', { retryable: true })
  })
  const other = await buildTestApp(t, { providers: [retrying.provider], outbox: { pollIntervalMs: 3_600_000, retryDelaysMs: [60_000] } })
  await other.shipments.integrations.create({ name: 'Warehouse', handle: 'wh', providerId: 'warehouse', settings: { token: 't' } })
  const { shipmentIds: [otherId] } = await orderWithShipments(other)
  t.match(await other.shipments.pushes.push('wh', otherId), { state: 'pending', error: 'Timed out.', attempts: 1, nextAttemptAt: /^\d{4}-/ }, 'a retryable failure is left to retry')
})

t.test('pushes of one shipment never run at once', async (t) => {
  const warehouse = warehouseProvider(async () => void (await sleep(30)))
  const app = await buildTestApp(t, options(warehouse.provider))
  await app.shipments.integrations.create({ name: 'Warehouse', handle: 'wh', providerId: 'warehouse', settings: { token: 't' } })
  await app.shipments.integrations.create({ name: 'Warehouse 2', handle: 'wh2', providerId: 'warehouse', settings: { token: 't' } })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const outcomes = await Promise.all([
    ...Array.from({ length: 4 }, () => app.shipments.pushes.push('wh', id)),
    ...Array.from({ length: 4 }, () => app.shipments.pushes.push('wh2', id)),
  ])
  await eventually(app, () => warehouse.calls.length === 8)
  t.equal(warehouse.calls.length, 8, 'every push made')
  t.equal(warehouse.mostAtOnce(), 1, 'one at a time, to one integration or several')
  t.ok(outcomes.every((outcome) => outcome.state !== 'failed'))
})

t.test('a change the integration itself reported is not pushed back to it; a cancel goes to cancelShipment', async (t) => {
  const warehouse = warehouseProvider(() => undefined)
  const app = await buildTestApp(t, options(warehouse.provider))
  await app.shipments.integrations.create({
    name: 'Warehouse',
    handle: 'wh',
    providerId: 'warehouse',
    settings: { token: 't' },
    statusMap: { PACKED: 'fulfilled' },
    pushOn: ['fulfilled', 'cancelled'],
  })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const integration = (await app.shipments.integrations.findStored('wh'))!
  await app.shipments.shipments.update(id, { status: 'fulfilled', integrationHandle: 'wh', externalCode: 'PACKED' }, {
    externalEvent: { integrationId: integration.id, occurredAt: new Date() },
  })
  await postUpdate(app, id, { status: 'cancelled' })
  await eventually(app, () => warehouse.calls.length === 1)
  await sleep(100)
  await app.shipments.outbox.sweep()
  t.same(warehouse.calls.map((call) => [call.action, call.request.shipment.status]), [['cancel', 'cancelled']], 'only the cancel, which a user made')
})

t.test('pushOn and the outbound status map are checked when the integration is saved', async (t) => {
  const warehouse = warehouseProvider(() => undefined)
  const noPush = defineProvider({ id: 'listener', settingsSchema: Type.Object({}), handleGatewayRequest: async () => ({ status: 204 }) })
  const app = await buildTestApp(t, { providers: [warehouse.provider, noPush] })
  const base = { name: 'W', handle: 'w', providerId: 'warehouse', settings: { token: 't' } }
  await t.rejects(app.shipments.integrations.create({ ...base, pushOn: ['packed'] }), { message: 'pushOn: "packed" is not a shipment status' })
  await t.rejects(app.shipments.integrations.create({ ...base, outboundStatusMap: { packed: 'P' } }), { message: 'outboundStatusMap: "packed" is not a shipment status' })
  await t.rejects(app.shipments.integrations.create({ ...base, outboundStatusMap: { shipped: '' } }), { message: 'outboundStatusMap.shipped: must be a non-empty string' })
  await t.rejects(app.shipments.integrations.create({ name: 'L', handle: 'l', providerId: 'listener', pushOn: ['shipped'] }), { message: 'pushOn: the provider "listener" has no pushShipment()' })
  await t.rejects(app.shipments.integrations.create({ name: 'N', handle: 'n', pushOn: ['shipped'] }), { message: 'pushOn: needs a provider that can push shipments' })
  t.same(await app.shipments.integrations.list(), [])
  const saved = await app.shipments.integrations.create({ ...base, outboundStatusMap: { shipped: 'SHIPPED' }, pushOn: ['shipped', 'shipped'] })
  t.match(saved, { outboundStatusMap: { shipped: 'SHIPPED' }, pushOn: ['shipped'] })
  await app.shipments.integrations.create({ name: 'L', handle: 'l', providerId: 'listener' })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  await t.rejects(app.shipments.pushes.push('l', id), { message: 'providerId: the provider of l cannot push shipments' })
  await t.rejects(app.shipments.pushes.push('w', 999_999), { message: /999999/ })
})

t.test('cancel with the order: open shipments cancelled, and restored when the order leaves the status', async (t) => {
  const app = await buildTestApp(t, { cancelWithOrderStatuses: ['cancelled', 'refunded'] })
  const orderId = await insertOrder(app)
  const [a, b, c, d] = await app.shipments.shipments.create(orderId, { count: 4 })
  await postUpdate(app, a.id, { status: 'shipped' })
  await postUpdate(app, b.id, { status: 'in_progress' })
  await postUpdate(app, c.id, { status: 'on_hold' })
  await app.shipments.shipments.softDelete(d.id)
  const changed: string[] = []
  app.shipments.events.on('shipmentStatusChanged', (event) => void changed.push(`${event.shipment.id}:${event.from}->${event.to}:${event.message}`))

  const cancelled = await app.shipments.shipments.orderStatusChanged(orderId, 'cancelled')
  t.equal(cancelled.action, 'cancelled')
  t.same(cancelled.shipments.map((shipment) => [shipment.id, shipment.status]), [[b.id, 'cancelled'], [c.id, 'cancelled']])
  t.match(await shipmentRow(app, a.id), { status: 'shipped' }, 'a shipped shipment stays shipped')
  t.match(await shipmentRow(app, d.id), { status: 'new' }, 'a deleted shipment is left alone')
  t.match((await historyRows(app, b.id)).at(-1), { fromStatus: 'in_progress', toStatus: 'cancelled', message: 'Cancelled with the order.' })
  t.same(changed, [`${b.id}:in_progress->cancelled:Cancelled with the order.`, `${c.id}:on_hold->cancelled:Cancelled with the order.`])

  const again = await app.shipments.shipments.orderStatusChanged(orderId, 'refunded')
  t.same(again.shipments, [], 'another cancelling status changes nothing more')

  // A shipment an admin moved on after the cancellation is the admin's: it is not restored.
  await postUpdate(app, c.id, { status: 'new' })
  await postUpdate(app, c.id, { status: 'cancelled' })
  const restored = await app.shipments.shipments.orderStatusChanged(orderId, 'processing')
  t.equal(restored.action, 'restored')
  t.same(restored.shipments.map((shipment) => [shipment.id, shipment.status]), [[b.id, 'in_progress']])
  t.match((await historyRows(app, b.id)).at(-1), { fromStatus: 'cancelled', toStatus: 'in_progress', message: 'Restored with the order.' })
  t.match(await shipmentRow(app, b.id), { status: 'in_progress', statusBeforeOrderCancel: null })
  t.match(await shipmentRow(app, c.id), { status: 'cancelled', statusBeforeOrderCancel: null })
  t.same((await app.shipments.shipments.orderStatusChanged(orderId, 'processing')).shipments, [], 'restoring twice changes nothing')
})

t.test('cancelWithOrderStatuses is checked at registration', async (t) => {
  await t.rejects(buildTestApp(t, { cancelWithOrderStatuses: [''] }), /cancelWithOrderStatuses/)
})
