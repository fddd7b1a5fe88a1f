// Driver errors never carry a statement's parameters: the data layer wraps them once, keeping the driver's
// code and naming the failure. Regressions: two instances creating one integration at once, the loser
// got Drizzle's raw "Failed query: insert ... params: ..." with the API key and webhook secret in it; a
// statement the database refused logged its parameters with the 500.
import t from 'tap'
import { inspect } from 'node:util'
import { IntegrationConfigError } from '../src/index.js'
import { as, buildTestApp, orderWithShipments } from './fixtures/app.js'
import { rawQuery, testDatabase, TEST_ENGINE } from './fixtures/database.js'

const API_KEY = 'EZAK-do-not-leak-4f1c9e'
const WEBHOOK_SECRET = 'whsec-do-not-leak-77b2a0'

t.test('two instances creating one integration handle at once: one is created, the other gets IntegrationConfigError without the secrets', async (t) => {
  const database = await testDatabase(t)
  const first = await buildTestApp(t, {}, database)
  const second = await buildTestApp(t, {}, database)
  const input = { name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { apiKey: API_KEY, webhookSecret: WEBHOOK_SECRET } }

  // Both check the handle before either inserts (each instance its own connection): the unique key decides.
  const outcomes = await Promise.allSettled([first.shipments.integrations.create(input), second.shipments.integrations.create(input)])
  const created = outcomes.filter((outcome) => outcome.status === 'fulfilled')
  const refused = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as Error] : []))
  t.equal(created.length, 1, 'one instance created it')
  t.equal(refused.length, 1)
  const [error] = refused
  t.ok(error instanceof IntegrationConfigError, `${error?.name}: ${error?.message}`)
  t.same((error as IntegrationConfigError).fields, { handle: ['"easypost" is already used'] })
  const shown = inspect(error, { depth: 10 })
  t.notMatch(shown, API_KEY, 'the API key is in no part of the error')
  t.notMatch(shown, WEBHOOK_SECRET, 'the webhook secret is in no part of the error')
  t.equal((await first.shipments.integrations.list()).length, 1, 'one integration stored')
})

t.test('a statement the database refuses: the answer and the log carry none of its parameters, the error keeps the driver code', async (t) => {
  const logLines: string[] = []
  const app = await buildTestApp(t, {}, undefined, logLines)
  const {
    shipmentIds: [id],
  } = await orderWithShipments(app)
  // Every update of a shipment row fails in the database itself, as a broken constraint or a full disk would.
  if (TEST_ENGINE === 'sqlite') {
    await rawQuery(app, "CREATE TRIGGER refuse_updates BEFORE UPDATE ON shipments_shipments BEGIN SELECT RAISE(ABORT, 'forced failure'); END")
  } else {
    await rawQuery(app, "CREATE FUNCTION refuse_updates() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'forced failure'; END $$ LANGUAGE plpgsql")
    await rawQuery(app, 'CREATE TRIGGER refuse_updates BEFORE UPDATE ON shipments_shipments FOR EACH ROW EXECUTE FUNCTION refuse_updates()')
  }
  const marker = 'TRACKING-PARAM-9d41be'
  const response = await app.inject({
    method: 'POST',
    url: `/shipments/api/shipments/${id}`,
    headers: { ...as('admin'), 'content-type': 'application/json' },
    payload: JSON.stringify({ trackingNumber: marker }),
  })
  t.equal(response.statusCode, 422, response.body)
  t.same(response.json(), { success: false, error: `Couldn't update shipment ${id}: the change could not be saved.`, errorCode: 'SHIPMENTS_UPDATE_REJECTED' }, 'the answer carries no parameter')
  const log = logLines.join('\n')
  t.match(log, 'forced failure', 'the log names the failure')
  t.notMatch(log, marker, 'the log carries no parameter')
  t.notMatch(log, /params:/, "no Drizzle query error's parameter list")
  t.match(log, TEST_ENGINE === 'sqlite' ? 'SQLITE_CONSTRAINT' : 'P0001', "the driver's code is kept")
  const [row] = await rawQuery(app, 'SELECT tracking_number FROM shipments_shipments WHERE id = ?', [id])
  t.equal(row.tracking_number, null, 'nothing was stored')

  // The service answers the same wrapped error to code calling it.
  const error = await app.shipments.shipments.update(id, { trackingNumber: marker }).then(
    () => null,
    (error: Error) => error,
  )
  t.match(error, { name: 'ShipmentUpdateRejectedError', cause: { name: 'ShipmentsDatabaseError', code: TEST_ENGINE === 'sqlite' ? 'SQLITE_CONSTRAINT_TRIGGER' : 'P0001' } })
  t.notMatch(inspect(error, { depth: 10 }), marker, 'no part of the error, its causes included, carries the parameter')
})
