// The read endpoints (beyond the spec): one shipment, the list and the history, with the bodies the
// README promises, and the 401 / 403 / 404 envelopes of each.
import t, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { as, buildTestApp, historyRows, orderRow, orderWithShipments, postUpdate, shipmentRow, type TEST_USERS } from './fixtures/app.js'

/** A stored time as the API shows it in the default UTC site timezone: seconds, with the +00:00 offset. */
const iso = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, '+00:00')

const UNAUTHORIZED = { name: 'Unauthorized', message: 'Login required.', code: 0, status: 401, errorCode: 'SHIPMENTS_UNAUTHORIZED' }
const FORBIDDEN = { name: 'Forbidden', message: 'User is not permitted to perform this action (shipments-viewShipments).', code: 0, status: 403, errorCode: 'SHIPMENTS_FORBIDDEN' }
const notFound = (id: string | number) => ({ name: 'Not Found', message: `Shipment ${id} not found.`, code: 0, status: 404, errorCode: 'SHIPMENTS_SHIPMENT_NOT_FOUND' })

const get = (app: FastifyInstance, url: string, user?: keyof typeof TEST_USERS) =>
  app.inject({ url: `/shipments/api/shipments${url}`, headers: user ? as(user) : {} })

/** The read body of a shipment, every field, from its stored row. */
async function expectedShipment(app: FastifyInstance, id: number) {
  const row = await shipmentRow(app, id)
  return {
    id,
    reference: row.reference,
    orderId: row.orderId,
    status: row.status,
    dateShipped: row.dateShipped && iso(row.dateShipped),
    dateScheduledShip: row.dateScheduledShip && iso(row.dateScheduledShip),
    trackingNumber: row.trackingNumber,
    trackingUrl: row.trackingUrl,
    carrier: row.carrier,
    service: row.service,
    fulfillmentNotes: row.fulfillmentNotes,
    shippingNotes: row.shippingNotes,
    enabled: row.enabled,
    fields: row.fields,
    items: row.items.map(({ ordered: _ordered, ...item }) => item),
    parcels: [], // these shipments have none; test/parcels.test.ts reads shipments with parcels
    dateCreated: iso(row.createdAt),
    dateUpdated: iso(row.updatedAt),
    dateDeleted: row.dateDeleted && iso(row.dateDeleted),
    estimatedDelivery: row.estimatedDelivery,
    estimatedDeliverySource: row.estimatedDeliverySource,
  }
}

/** 401 without a user and 403 without shipments-viewShipments (the editor and admin may read). */
async function refusesStrangers(t: Test, app: FastifyInstance, url: string) {
  let response = await get(app, url)
  t.equal(response.statusCode, 401, `${url} without a user`)
  t.same(response.json(), UNAUTHORIZED)
  response = await get(app, url, 'nobody')
  t.equal(response.statusCode, 403, `${url} without the view permission`)
  t.same(response.json(), FORBIDDEN)
}

t.test('GET one shipment: every field of a new and of a filled-in shipment; 401, 403, 404', async (t) => {
  let now = Date.UTC(2026, 10, 23, 9, 15, 30, 250)
  const app = await buildTestApp(t, { clock: () => now, shipmentFields: [{ handle: 'packageCount', type: 'number' }] })
  const { orderId, shipmentIds: [id] } = await orderWithShipments(app)
  const order = await orderRow(app, orderId)
  const created = (await shipmentRow(app, id)).createdAt

  let response = await get(app, `/${id}`, 'viewer')
  t.equal(response.statusCode, 200)
  t.same(response.json(), {
    success: true,
    shipment: {
      id,
      reference: `${order.reference}-s001`,
      orderId,
      status: 'new',
      dateShipped: null,
      dateScheduledShip: null,
      trackingNumber: null,
      trackingUrl: null,
      carrier: null,
      service: null,
      fulfillmentNotes: null,
      shippingNotes: null,
      enabled: true,
      fields: {},
      items: [],
      dateCreated: iso(created),
      dateUpdated: iso(created),
      dateDeleted: null,
      estimatedDelivery: null,
      estimatedDeliverySource: null,
      // The single read carries the shipment's parcels (issue 34): none here.
      parcels: [],
    },
  })

  now += 60_000
  const update = await postUpdate(app, id, {
    status: 'shipped',
    carrier: 'UPS',
    service: 'Ground',
    trackingNumber: '1Z999AA10123456784',
    trackingUrl: 'ups.com/track?num=1Z999AA10123456784',
    dateScheduledShip: '2026-11-24',
    fulfillmentNotes: 'Two boxes',
    shippingNotes: 'Ring twice',
    fields: { packageCount: 2 },
  })
  t.equal(update.statusCode, 200)
  await app.shipments.shipments.softDelete(id)
  const deleted = (await shipmentRow(app, id)).dateDeleted!
  response = await get(app, `/${id}`, 'editor')
  t.equal(response.statusCode, 200, 'a soft-deleted shipment is still readable')
  const shipment = {
    id,
    reference: `${order.reference}-s001`,
    orderId,
    status: 'shipped',
    dateShipped: '2026-11-23T09:16:30+00:00',
    dateScheduledShip: '2026-11-24T00:00:00+00:00',
    trackingNumber: '1Z999AA10123456784',
    trackingUrl: 'https://ups.com/track?num=1Z999AA10123456784',
    carrier: 'UPS',
    service: 'Ground',
    fulfillmentNotes: 'Two boxes',
    shippingNotes: 'Ring twice',
    enabled: true,
    fields: { packageCount: 2 },
    items: [],
    dateCreated: iso(created),
    dateUpdated: iso((await shipmentRow(app, id)).updatedAt),
    dateDeleted: iso(deleted),
    estimatedDelivery: null,
    estimatedDeliverySource: null,
    parcels: [],
  }
  t.same(response.json(), { success: true, shipment })
  const { dateCreated: _created, dateUpdated: _updated, dateDeleted: _deleted, parcels: _parcels, estimatedDelivery: _estimate, estimatedDeliverySource: _source, ...specFields } = shipment
  t.same(update.json(), { success: true, shipment: specFields }, 'the update answered the same shipment, without the admin dates')

  await refusesStrangers(t, app, `/${id}`)
  for (const unknown of ['4040', 'abc', '0', '-1', '1.5']) {
    response = await get(app, `/${unknown}`, 'viewer')
    t.equal(response.statusCode, 404, `GET /${unknown}`)
    t.same(response.json(), notFound(unknown))
  }
})

t.test('GET list: by order, by status, paged, soft-deleted left out unless asked for; every shipment in full', async (t) => {
  const app = await buildTestApp(t)
  const first = await orderWithShipments(app, 3)
  const second = await orderWithShipments(app, 2)
  await postUpdate(app, first.shipmentIds[0], { status: 'shipped', carrier: 'DHL' })
  await app.shipments.shipments.softDelete(first.shipmentIds[2])

  /** Asserts the whole body: these shipments, in full and in this order, and the pagination. */
  const listed = async (query: string, ids: number[], pagination: { page: number; perPage: number; total: number; pages: number }) => {
    const response = await get(app, `?${query}`, 'viewer')
    t.equal(response.statusCode, 200, query)
    const shipments = await Promise.all(ids.map((id) => expectedShipment(app, id)))
    t.same(response.json(), { success: true, shipments, pagination }, query)
  }
  await listed(`orderId=${first.orderId}`, first.shipmentIds.slice(0, 2), { page: 1, perPage: 50, total: 2, pages: 1 })
  await listed(`orderId=${first.orderId}&includeDeleted=true`, first.shipmentIds, { page: 1, perPage: 50, total: 3, pages: 1 })
  await listed(`orderId=${first.orderId}&includeDeleted=false`, first.shipmentIds.slice(0, 2), { page: 1, perPage: 50, total: 2, pages: 1 })
  await listed('', [first.shipmentIds[0], first.shipmentIds[1], ...second.shipmentIds], { page: 1, perPage: 50, total: 4, pages: 1 })
  await listed('status=new', [first.shipmentIds[1], ...second.shipmentIds], { page: 1, perPage: 50, total: 3, pages: 1 })
  await listed('status=shipped', [first.shipmentIds[0]], { page: 1, perPage: 50, total: 1, pages: 1 })
  await listed(`status=new&orderId=${second.orderId}`, second.shipmentIds, { page: 1, perPage: 50, total: 2, pages: 1 })
  await listed('perPage=2', first.shipmentIds.slice(0, 2), { page: 1, perPage: 2, total: 4, pages: 2 })
  await listed('perPage=2&page=2', second.shipmentIds, { page: 2, perPage: 2, total: 4, pages: 2 })
  await listed('perPage=3&page=2', [second.shipmentIds[1]], { page: 2, perPage: 3, total: 4, pages: 2 })
  await listed('perPage=2&page=3', [], { page: 3, perPage: 2, total: 4, pages: 2 })
  await listed('perPage=100', [first.shipmentIds[0], first.shipmentIds[1], ...second.shipmentIds], { page: 1, perPage: 100, total: 4, pages: 1 })
  await listed('status=cancelled', [], { page: 1, perPage: 50, total: 0, pages: 0 })
  const deletedRow = await expectedShipment(app, first.shipmentIds[2])
  t.ok(deletedRow.dateDeleted, 'the soft-deleted shipment lists with its deletion date')

  for (const [query, parameter] of [['status=lost', 'status'], ['perPage=101', 'perPage'], ['perPage=0', 'perPage'], ['page=0', 'page'], ['orderId=abc', 'orderId']]) {
    const bad = await get(app, `?${query}`, 'viewer')
    t.equal(bad.statusCode, 400, query)
    t.match(bad.json(), { name: 'Bad Request', message: new RegExp(`^querystring/${parameter} `), code: 0, status: 400, errorCode: 'SHIPMENTS_VALIDATION_FAILED' }, query)
    t.same(Object.keys(bad.json()).sort(), ['code', 'errorCode', 'message', 'name', 'status'], `${query}: the framework envelope, nothing else`)
  }
  await refusesStrangers(t, app, '')
  await refusesStrangers(t, app, `?orderId=${first.orderId}`)
})

t.test('GET history: newest first, every field, with the change source; 401, 403, 404', async (t) => {
  let now = Date.UTC(2026, 10, 23, 9, 0, 0)
  const app = await buildTestApp(t, { clock: () => now })
  const { shipmentIds: [id, other] } = await orderWithShipments(app, 2)
  const created = (await shipmentRow(app, id)).createdAt
  now += 60_000
  await postUpdate(app, id, { status: 'in_progress', statusMessage: 'Picking' })
  now += 60_000
  await postUpdate(app, id, { status: 'shipped', integrationHandle: 'acme', externalCode: 'SHIPPED' }, 'admin')
  now += 60_000
  await postUpdate(app, id, { carrier: 'UPS' }) // no status change: no history row
  await postUpdate(app, other, { status: 'cancelled' }) // another shipment's history stays its own
  const rowIds = (await historyRows(app, id)).map((row) => row.id)

  const response = await get(app, `/${id}/history`, 'viewer')
  t.equal(response.statusCode, 200)
  t.same(response.json(), {
    success: true,
    history: [
      { id: rowIds[2], shipmentId: id, fromStatus: 'in_progress', toStatus: 'shipped', message: null, userId: 'admin', sourceIntegration: 'acme', externalCode: 'SHIPPED', dateCreated: '2026-11-23T09:02:00+00:00' },
      { id: rowIds[1], shipmentId: id, fromStatus: 'new', toStatus: 'in_progress', message: 'Picking', userId: 'admin', sourceIntegration: null, externalCode: null, dateCreated: '2026-11-23T09:01:00+00:00' },
      { id: rowIds[0], shipmentId: id, fromStatus: null, toStatus: 'new', message: null, userId: null, sourceIntegration: null, externalCode: null, dateCreated: iso(created) },
    ],
  })

  await app.shipments.shipments.softDelete(id)
  const afterDelete = await get(app, `/${id}/history`, 'editor')
  t.equal(afterDelete.statusCode, 200, 'the history of a soft-deleted shipment is still readable')
  t.same(afterDelete.json(), response.json(), 'and unchanged by the deletion')

  await refusesStrangers(t, app, `/${id}/history`)
  for (const unknown of ['777', 'abc', '0']) {
    const missing = await get(app, `/${unknown}/history`, 'viewer')
    t.equal(missing.statusCode, 404, `history of ${unknown}`)
    t.same(missing.json(), notFound(unknown))
  }
})

t.test('ids beyond what a database integer holds name no shipment: 404 on every engine, never a 500', async (t) => {
  const app = await buildTestApp(t)
  const { shipmentIds: [id] } = await orderWithShipments(app)
  for (const huge of ['2147483648', '9007199254740991']) {
    const read = await app.inject({ url: `/shipments/api/shipments/${huge}`, headers: as('viewer') })
    t.equal(read.statusCode, 404, `GET ${huge}`)
    t.same(read.json(), { name: 'Not Found', message: `Shipment ${huge} not found.`, code: 0, status: 404, errorCode: 'SHIPMENTS_SHIPMENT_NOT_FOUND' })
    const history = await app.inject({ url: `/shipments/api/shipments/${huge}/history`, headers: as('viewer') })
    t.equal(history.statusCode, 404, `GET ${huge}/history`)
    const update = await postUpdate(app, huge, { status: 'shipped' })
    t.equal(update.statusCode, 404, `POST ${huge}`)
    t.equal(update.json().message, `Shipment ${huge} not found.`)
    const historyBody = history.json()
    t.same(historyBody, { name: 'Not Found', message: `Shipment ${huge} not found.`, code: 0, status: 404, errorCode: 'SHIPMENTS_SHIPMENT_NOT_FOUND' })
    // A list filter beyond the 32-bit range is refused by the query schema (a 400 naming it), never a 500.
    const list = await app.inject({ url: `/shipments/api/shipments?orderId=${huge}`, headers: as('viewer') })
    t.equal(list.statusCode, 400, `list by order ${huge}`)
    t.same(list.json(), { name: 'Bad Request', message: 'querystring/orderId must be <= 2147483647', code: 0, status: 400, errorCode: 'SHIPMENTS_VALIDATION_FAILED' })
  }
  const largest = await app.inject({ url: '/shipments/api/shipments?orderId=2147483647', headers: as('viewer') })
  t.same(largest.json(), { success: true, shipments: [], pagination: { page: 1, perPage: 50, total: 0, pages: 0 } }, 'the largest order id names no order: an empty list')
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
  t.same(response.json(), { name: 'Internal Server Error', message: 'An internal error occurred.', code: 0, status: 500, errorCode: 'SHIPMENTS_INTERNAL_ERROR' })
  const read = await app.shipments.shipments.get(id)
  t.equal(read!.status, 'new')
  t.equal((await app.shipments.shipments.history(id)).length, 1, 'no history row')
})

/** The SQL statements (with their values) the app sends while `work` runs. */
async function statementsOf(app: FastifyInstance, work: () => Promise<unknown>): Promise<Array<{ text: string; values: unknown[] }>> {
  const seen: Array<{ text: string; values: unknown[] }> = []
  const handle = app.shipments.database
  if (handle.engine === 'sqlite') {
    // The data layer keeps its statements prepared: what runs is seen on the statements' own methods.
    const statementMethods = Object.getPrototypeOf(handle.db.$client.prepare('SELECT 1')) as Record<'all' | 'get' | 'run', (...args: unknown[]) => unknown>
    const originals = { all: statementMethods.all, get: statementMethods.get, run: statementMethods.run }
    for (const name of ['all', 'get', 'run'] as const) {
      statementMethods[name] = function (this: { source: string }, ...args: unknown[]) {
        seen.push({ text: this.source, values: args })
        return originals[name].apply(this, args)
      }
    }
    try {
      await work()
    } finally {
      Object.assign(statementMethods, originals)
    }
  } else {
    const pool = handle.db.$client
    const query = pool.query.bind(pool)
    pool.query = ((config: unknown, values?: unknown[]) => {
      const asConfig = config as { text?: string; values?: unknown[] }
      // Drizzle passes the values beside a config object.
      seen.push(typeof config === 'string' ? { text: config, values: values ?? [] } : { text: asConfig.text ?? '', values: values ?? asConfig.values ?? [] })
      return query(config as never, values as never)
    }) as typeof pool.query
    try {
      await work()
    } finally {
      pool.query = query
    }
  }
  return seen
}

t.test('search: the start of a reference (ASCII letters in either case) or a whole tracking number, read from an index on each engine', async (t) => {
  const app = await buildTestApp(t)
  const references = ['ORD-1042', 'ORD-2042', 'Ωmega-7', 'ab%c']
  const ids: Record<string, number> = {}
  for (const reference of references) {
    const orderId = await app.shipments.referenceOrders!.createOrder({ reference, isCompleted: true })
    ids[reference] = (await app.shipments.shipments.create(orderId))[0]!.id
  }
  await app.shipments.shipments.update(ids['ORD-2042']!, { trackingNumber: '1Z 999 AA1' })
  const found = async (search: string) => {
    const page = await app.shipments.shipments.list({ search })
    t.equal(page.total, page.shipments.length, `the total of ${search} counts its matches`)
    return page.shipments.map((shipment) => shipment.reference).sort()
  }
  t.same(await found('ord-10'), ['ORD-1042-s001'], 'the start of the reference, ASCII letters in either case')
  t.same(await found('ORD'), ['ORD-1042-s001', 'ORD-2042-s001'])
  t.same(await found('1042'), [], 'the middle of a reference is not its start')
  t.same(await found('Ωmega'), ['Ωmega-7-s001'])
  t.same(await found('ωmega'), [], 'letters beyond ASCII match as written')
  t.same(await found('%'), [], 'a % is searched for, not a wildcard')
  t.same(await found('ab%'), ['ab%c-s001'])
  t.same(await found('1z999aa1'), ['ORD-2042-s001'], 'a whole tracking number, however typed')
  t.same(await found('1Z 999'), [], 'a part of a tracking number is not one')

  // The list's statement for a search reads the reference index (and the tracking-number index),
  // never the whole table.
  const statements = await statementsOf(app, () => app.shipments.shipments.list({ search: 'ORD-1' }))
  const listing = statements.find((statement) => /select .* from "shipments_shipments"/i.test(statement.text) && /reference/i.test(statement.text) && !/count\(/i.test(statement.text))
  t.ok(listing, 'the list statement was seen')
  const handle = app.shipments.database
  if (handle.engine === 'sqlite') {
    const plan = (handle.db.$client.prepare(`EXPLAIN QUERY PLAN ${listing!.text}`).all(...(listing!.text.match(/\?/g) ?? []).map(() => null)) as Array<{ detail: string }>).map((row) => row.detail).join('\n')
    t.match(plan, /shipments_shipments_reference_search_idx/, plan)
    t.notMatch(plan, /SCAN shipments_shipments\b(?! USING)/, 'no scan of the table')
  } else {
    const client = await handle.db.$client.connect()
    try {
      await client.query('BEGIN')
      // A few rows: the planner would rather read the table; what matters is that the index answers it.
      await client.query('SET LOCAL enable_seqscan = off')
      const { rows } = await client.query(`EXPLAIN ${listing!.text}`, listing!.values)
      const plan = rows.map((row: Record<string, string>) => row['QUERY PLAN']).join('\n')
      t.match(plan, /shipments_shipments_reference_search_idx/, plan)
      t.notMatch(plan, /Seq Scan on shipments_shipments/, 'no scan of the table')
      await client.query('ROLLBACK')
    } finally {
      client.release()
    }
  }
})

t.test('a first page that is not full is its own total: no count statement (a tracking event, an order page)', async (t) => {
  const app = await buildTestApp(t)
  const orderId = await app.shipments.referenceOrders!.createOrder({ reference: 'COUNTED', isCompleted: true })
  const created = await app.shipments.shipments.create(orderId, { count: 3 })
  await app.shipments.shipments.update(created[0]!.id, { trackingNumber: '1ZCOUNTED1' })
  const counts = (statements: Array<{ text: string }>) => statements.filter((statement) => /count\(/i.test(statement.text)).length

  let page!: Awaited<ReturnType<typeof app.shipments.shipments.list>>
  let statements = await statementsOf(app, async () => (page = await app.shipments.shipments.list({ trackingNumber: '1ZCOUNTED1', perPage: 100 })))
  t.same([page.total, page.shipments.map((shipment) => shipment.id)], [1, [created[0]!.id]])
  t.equal(counts(statements), 0, 'by tracking number: no count')
  statements = await statementsOf(app, async () => (page = await app.shipments.shipments.list({ orderId, perPage: 100 })))
  t.same([page.total, page.shipments.length], [3, 3])
  t.equal(counts(statements), 0, "an order's shipments: no count")
  // A full page may have more behind it: then the total is counted.
  statements = await statementsOf(app, async () => (page = await app.shipments.shipments.list({ orderId, perPage: 2 })))
  t.same([page.total, page.shipments.length], [3, 2])
  t.equal(counts(statements), 1, 'a full page is counted')
  statements = await statementsOf(app, async () => (page = await app.shipments.shipments.list({ orderId, perPage: 2, page: 2 })))
  t.same([page.total, page.shipments.length], [3, 1], 'a later page is counted too, even when not full')
  t.equal(counts(statements), 1)
})
