// A secret setting that reads an environment variable is checked when it is read, not only when it is
// saved: a process started with the variable empty (or unset) refuses every request of the integration,
// on every built-in provider, rather than verify signatures made with an empty key. The log names the
// integration, the setting and the variable, never a value.
import t from 'tap'
import { signAfterShipWebhook, signEasyPostEvent, signWebhook } from '../src/index.js'
import { buildTestApp, historyRows, orderWithShipments, shipmentRow } from './fixtures/app.js'

const SIGNED_SECRET = 'whsec_' + Buffer.from('a-test-signing-secret-of-32-bytes').toString('base64')
const VARIABLE = 'SHIPMENTS_TEST_EMPTY_SECRET_30'

/** For each provider: the settings saved (the secret from the variable) and a request signed with `key`. */
const providers = {
  'signed-webhook': {
    valid: SIGNED_SECRET,
    settings: { secret: `$${VARIABLE}` },
    request: (key: string, body: string) => {
      const timestamp = Math.floor(Date.now() / 1000)
      return { 'webhook-id': `msg_${Math.random()}`, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(key, 'unused', timestamp, body) }
    },
  },
  easypost: { valid: 'an-easypost-webhook-secret', settings: { webhookSecret: `$${VARIABLE}` }, request: (key: string, body: string) => ({ 'x-hmac-signature': signEasyPostEvent(key, Buffer.from(body)) }) },
  aftership: { valid: 'an-aftership-webhook-secret', settings: { webhookSecret: `$${VARIABLE}` }, request: (key: string, body: string) => ({ 'aftership-hmac-sha256': signAfterShipWebhook(key, Buffer.from(body)) }) },
} as const

for (const [providerId, provider] of Object.entries(providers)) {
  t.test(`${providerId}: a secret variable that is empty or unset when the process runs refuses every request`, async (t) => {
    process.env[VARIABLE] = provider.valid
    t.teardown(() => delete process.env[VARIABLE])
    const logLines: string[] = []
    const app = await buildTestApp(t, {}, undefined, logLines)
    await app.shipments.integrations.create({ name: 'Carrier', handle: 'carrier', providerId, settings: provider.settings })
    const { shipmentIds: [id] } = await orderWithShipments(app)
    const before = await shipmentRow(app, id)
    const historyBefore = await historyRows(app, id)

    for (const [what, value] of [['empty', ''], ['blank', '  '], ['unset', undefined]] as const) {
      if (value === undefined) delete process.env[VARIABLE]
      else process.env[VARIABLE] = value
      const body = JSON.stringify({ anything: 'signed with an empty key' })
      const headers = { 'content-type': 'application/json', ...provider.request(value ?? '', body) }
      const response = await app.inject({ method: 'POST', url: '/actions/shipments/gateway/handle?integration=carrier', headers, payload: body })
      t.equal(response.statusCode, 400, `${what}: refused`)
      t.same(response.json(), { name: 'Bad Request', message: 'Integration carrier is not configured: one of its secret settings is empty or not set.', code: 0, status: 400 }, `${what}: the body says why, naming no variable`)
    }
    t.same(await shipmentRow(app, id), before, 'nothing changed')
    t.same(await historyRows(app, id), historyBefore, 'no history written')

    const warnings = logLines.map((line) => JSON.parse(line) as { level: number; msg: string; variable?: string }).filter((entry) => /refused a request: its secret setting/.test(entry.msg))
    t.equal(warnings.length, 3, 'one warning per refused request')
    t.match(warnings[0], { level: 40, variable: VARIABLE, msg: new RegExp(`^Integration carrier refused a request: its secret setting \\w+ reads the environment variable ${VARIABLE}, which is empty or not set$`) })
    t.notMatch(logLines.join('\n'), provider.valid, 'no secret value in the log')

    process.env[VARIABLE] = provider.valid
    const body = JSON.stringify({ anything: 'signed with the real key' })
    const response = await app.inject({ method: 'POST', url: '/actions/shipments/gateway/handle?integration=carrier', headers: { 'content-type': 'application/json', ...provider.request(provider.valid, body) }, payload: body })
    t.not(response.json<{ message?: string }>().message, 'Integration carrier is not configured: one of its secret settings is empty or not set.', 'with the variable set again, the provider itself answers')
  })
}

t.test('ShipStation: a password that reads blank fails at registration, naming the option', async (t) => {
  process.env[VARIABLE] = '   '
  t.teardown(() => delete process.env[VARIABLE])
  await t.rejects(buildTestApp(t, { orderExchange: { username: 'ss', password: `$${VARIABLE}` } }), /orderExchange\.password.*must not be empty/)
})

t.test('the tracking page: a secret that reads empty fails at registration, naming the option', async (t) => {
  process.env[VARIABLE] = ''
  t.teardown(() => delete process.env[VARIABLE])
  await t.rejects(buildTestApp(t, { trackingPage: { secret: `$${VARIABLE}`, baseUrl: 'https://shop.example' } }), /trackingPage\.secret.*must be at least 32 characters/)
})
