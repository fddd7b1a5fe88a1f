import t from 'tap'
import { as, buildTestApp, orderWithShipments, postUpdate } from './fixtures/app.js'

t.test('GET one shipment: 200 with admin fields, 401, 403, 404', async (t) => {
  const app = await buildTestApp(t)
  const { orderId, shipmentIds: [id] } = await orderWithShipments(app)
  let response = await app.inject({ url: `/shipments/api/shipments/${id}`, headers: as('viewer') })
  t.equal(response.statusCode, 200)
  t.match(response.json(), { success: true, shipment: { id, orderId, status: 'new', dateDeleted: null } })
  t.match(response.json().shipment.dateCreated, /\+00:00$/)

  response = await app.inject({ url: `/shipments/api/shipments/${id}` })
  t.equal(response.statusCode, 401)
  t.same(response.json(), { name: 'Unauthorized', message: 'Login required.', code: 0, status: 401 })
  response = await app.inject({ url: `/shipments/api/shipments/${id}`, headers: as('nobody') })
  t.equal(response.statusCode, 403)
  t.equal(response.json().message, 'User is not permitted to perform this action (shipments-viewShipments).')
  response = await app.inject({ url: '/shipments/api/shipments/4040', headers: as('viewer') })
  t.equal(response.statusCode, 404)
  t.same(response.json(), { name: 'Not Found', message: 'Shipment 4040 not found.', code: 0, status: 404 })
})

t.test('GET list: by order, by status, paged, soft-deleted left out unless asked for', async (t) => {
  const app = await buildTestApp(t)
  const first = await orderWithShipments(app, 3)
  const second = await orderWithShipments(app, 2)
  await postUpdate(app, first.shipmentIds[0], { status: 'shipped' })
  await app.shipments.shipments.softDelete(first.shipmentIds[2])

  const list = async (query: string) => {
    const response = await app.inject({ url: `/shipments/api/shipments?${query}`, headers: as('viewer') })
    t.equal(response.statusCode, 200, query)
    return response.json()
  }
  let body = await list(`orderId=${first.orderId}`)
  t.same(body.shipments.map((shipment: { id: number }) => shipment.id), first.shipmentIds.slice(0, 2))
  t.same(body.pagination, { page: 1, perPage: 50, total: 2, pages: 1 })

  body = await list(`orderId=${first.orderId}&includeDeleted=true`)
  t.equal(body.shipments.length, 3)
  t.ok(body.shipments[2].dateDeleted)

  body = await list('status=new')
  t.same(body.shipments.map((shipment: { id: number }) => shipment.id), [first.shipmentIds[1], ...second.shipmentIds])
  body = await list('status=shipped')
  t.same(body.shipments.map((shipment: { id: number }) => shipment.id), [first.shipmentIds[0]])

  body = await list('perPage=2&page=2')
  t.same(body.pagination, { page: 2, perPage: 2, total: 4, pages: 2 })
  t.same(body.shipments.map((shipment: { id: number }) => shipment.id), second.shipmentIds)

  const bad = await app.inject({ url: '/shipments/api/shipments?status=lost', headers: as('viewer') })
  t.equal(bad.statusCode, 400)
  t.match(bad.json(), { name: 'Bad Request', code: 0, status: 400 })
})

t.test('GET history: newest first, with the change source', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  await postUpdate(app, id, { status: 'in_progress', statusMessage: 'Picking' })
  await postUpdate(app, id, { status: 'shipped', integrationHandle: 'acme', externalCode: 'SHIPPED' })
  const response = await app.inject({ url: `/shipments/api/shipments/${id}/history`, headers: as('viewer') })
  t.equal(response.statusCode, 200)
  const { history } = response.json()
  t.same(
    history.map((entry: Record<string, unknown>) => [entry.fromStatus, entry.toStatus, entry.message, entry.userId, entry.sourceIntegration, entry.externalCode]),
    [
      ['in_progress', 'shipped', null, 'admin', 'acme', 'SHIPPED'],
      ['new', 'in_progress', 'Picking', 'admin', null, null],
      [null, 'new', null, null, null, null],
    ],
  )
  const missing = await app.inject({ url: '/shipments/api/shipments/777/history', headers: as('viewer') })
  t.equal(missing.statusCode, 404)
})

t.test('ids beyond what a database integer holds name no shipment: 404 on every engine, never a 500', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  for (const huge of ['2147483648', '9007199254740991']) {
    const read = await app.inject({ url: `/shipments/api/shipments/${huge}`, headers: as('viewer') })
    t.equal(read.statusCode, 404, `GET ${huge}`)
    t.same(read.json(), { name: 'Not Found', message: `Shipment ${huge} not found.`, code: 0, status: 404 })
    const history = await app.inject({ url: `/shipments/api/shipments/${huge}/history`, headers: as('viewer') })
    t.equal(history.statusCode, 404, `GET ${huge}/history`)
    const update = await postUpdate(app, huge, { status: 'shipped' })
    t.equal(update.statusCode, 404, `POST ${huge}`)
    t.equal(update.json().message, `Shipment ${huge} not found.`)
    const list = await app.inject({ url: `/shipments/api/shipments?orderId=${huge}`, headers: as('viewer') })
    t.equal(list.statusCode, 200, `list by order ${huge}`)
    t.same(list.json().shipments, [])
  }
  const untouched = await app.inject({ url: `/shipments/api/shipments/${id}`, headers: as('viewer') })
  t.equal(untouched.json().shipment.status, 'new')
})

t.test('a hasPermission that throws is a 500 with the generic message, and nothing changes', async (t) => {
  const app = await buildTestApp(t, {
    hasPermission: (_user, permission) => {
      if (permission === 'shipments-transitionShipments') throw new Error('permission service down')
      return true
    },
  })
  const { shipmentIds: [id] } = await orderWithShipments(app)
  const response = await postUpdate(app, id, { status: 'shipped' })
  t.equal(response.statusCode, 500)
  t.same(response.json(), { name: 'Internal Server Error', message: 'An internal error occurred.', code: 0, status: 500 })
  const read = await app.shipments.shipments.get(id)
  t.equal(read!.status, 'new')
  t.equal((await app.shipments.shipments.history(id)).length, 1, 'no history row')
})
