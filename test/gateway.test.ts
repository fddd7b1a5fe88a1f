import { createHash } from 'node:crypto'
import t, { type Test } from 'tap'
import { Type } from '@sinclair/typebox'
import { defineProvider, IntegrationError, type ShipmentStatus, type ShipmentsPluginOptions } from '../src/index.js'
import * as schema from '../src/db/sqlite/schema.js'
import { buildTestApp } from './fixtures/app.js'
import { eq } from 'drizzle-orm'
import { otherConnection, tables, TEST_ENGINE, testDatabase } from './fixtures/database.js'

/** Answers with what it received, so tests can see the raw bytes and headers the gateway passed on. */
const echoProvider = defineProvider({
  id: 'echo',
  settingsSchema: Type.Object({ mode: Type.Optional(Type.String()) }),
  async handleGatewayRequest(request, context) {
    if (context.settings.mode === 'integration-error') throw new IntegrationError('Signature mismatch for echo.')
    if (context.settings.mode === 'crash') throw new Error('database exploded: secret=hunter2')
    if (context.settings.mode === 'custom-response') {
      return { status: 201, headers: { 'content-type': 'text/xml; charset=utf-8', 'x-provider': 'echo' }, body: '<ok n="1"/>' }
    }
    if (context.settings.mode === 'own-400') return { status: 400, body: { problem: 'provider says no', extra: [1] } }
    return {
      body: {
        method: request.method,
        contentType: request.headers['content-type'] ?? null,
        signature: request.headers['x-signature'] ?? null,
        bodySha256: createHash('sha256').update(request.rawBody).digest('hex'),
        bodyLength: request.rawBody.length,
        query: request.query,
      },
    }
  },
})

/** A provider that counts its calls (per handle), to show which requests never reach a provider. */
function countingProvider() {
  const calls: string[] = []
  const provider = defineProvider({
    id: 'counting',
    settingsSchema: Type.Object({}),
    async handleGatewayRequest(_request, context) {
      calls.push(context.integration.handle)
      return { status: 202, body: { counted: calls.length } }
    },
  })
  return { provider, calls }
}

async function gatewayApp(t: Test, logLines?: string[], providers: NonNullable<ShipmentsPluginOptions['providers']> = [echoProvider]) {
  const app = await buildTestApp(t, { providers, gatewayBodyLimit: 2048 }, await testDatabase(t, 'gw'), logLines)
  return app
}

/** The gateway's own error envelope. */
const envelope = (status: 400 | 404 | 413, message: string, errorCode: string) => ({
  name: { 400: 'Bad Request', 404: 'Not Found', 413: 'Payload Too Large' }[status],
  message,
  code: 0,
  status,
  errorCode,
})

const gateway = (handle?: string) => `/actions/shipments/gateway/handle${handle === undefined ? '' : `?integration=${encodeURIComponent(handle)}`}`

t.test('400 without the integration parameter, 404 for an unknown handle: the envelope, and no provider is called', async (t) => {
  const counting = countingProvider()
  const app = await gatewayApp(t, undefined, [echoProvider, counting.provider])
  await app.shipments.integrations.create({ name: 'Counted', handle: 'counted', providerId: 'counting' })
  const missing = envelope(400, 'Integration must be set.', 'SHIPMENTS_GATEWAY_INTEGRATION_MISSING')
  for (const [method, url, label] of [
    ['POST', gateway(), 'no integration parameter'],
    ['POST', gateway(''), 'an empty integration parameter'],
    ['GET', gateway(), 'no integration parameter (GET)'],
    ['POST', '/actions/shipments/gateway/handle?handle=counted', 'the handle under another name'],
  ] as const) {
    const response = await app.inject({ method, url, payload: method === 'POST' ? 'x' : undefined })
    t.equal(response.statusCode, 400, label)
    t.same(response.json(), missing, label)
  }
  for (const [method, handle] of [['GET', 'nope'], ['POST', 'counted-not'], ['PUT', 'COUNTED']] as const) {
    const response = await app.inject({ method, url: gateway(handle), payload: method === 'GET' ? undefined : '{}' })
    t.equal(response.statusCode, 404, handle)
    t.same(response.json(), envelope(404, `Unknown integration: ${handle}`, 'SHIPMENTS_GATEWAY_UNKNOWN_INTEGRATION'), handle)
  }
  t.same(counting.calls, [], 'the provider was never called')

  // The counting provider does count: the same app reaches it for the integration that exists.
  const reached = await app.inject({ method: 'POST', url: gateway('counted'), payload: 'x' })
  t.equal(reached.statusCode, 202)
  t.same(reached.json(), { counted: 1 })
  t.same(counting.calls, ['counted'])
})

t.test('400 when disabled (literally or through the environment) or without a provider: the envelope, and no provider is called', async (t) => {
  const counting = countingProvider()
  const app = await gatewayApp(t, undefined, [echoProvider, counting.provider])
  const { integrations } = app.shipments
  await integrations.create({ name: 'Off', handle: 'off', enabled: false, providerId: 'counting' })
  await integrations.create({ name: 'Env', handle: 'env', enabled: '$GATEWAY_TEST_ENABLED', providerId: 'counting' })
  await integrations.create({ name: 'Bare', handle: 'bare', providerId: null })
  await integrations.create({ name: 'Gone', handle: 'gone', providerId: 'counting' })
  t.teardown(() => void delete process.env.GATEWAY_TEST_ENABLED)
  const post = (handle: string) => app.inject({ method: 'POST', url: gateway(handle), payload: '{"status":"shipped"}', headers: { 'content-type': 'application/json' } })

  let response = await post('off')
  t.equal(response.statusCode, 400)
  t.same(response.json(), envelope(400, 'Integration off is disabled.', 'SHIPMENTS_GATEWAY_INTEGRATION_DISABLED'))

  delete process.env.GATEWAY_TEST_ENABLED
  response = await post('env')
  t.equal(response.statusCode, 400, 'an unset variable means disabled')
  t.same(response.json(), envelope(400, 'Integration env is disabled.', 'SHIPMENTS_GATEWAY_INTEGRATION_DISABLED'))
  process.env.GATEWAY_TEST_ENABLED = 'off'
  response = await post('env')
  t.equal(response.statusCode, 400, 'a false value means disabled')
  t.same(response.json(), envelope(400, 'Integration env is disabled.', 'SHIPMENTS_GATEWAY_INTEGRATION_DISABLED'))

  response = await post('bare')
  t.equal(response.statusCode, 400)
  t.same(response.json(), envelope(400, 'Integration bare has no provider.', 'SHIPMENTS_GATEWAY_NO_PROVIDER'))

  // A provider that was registered when the integration was saved and is gone now.
  await tables(app).db.update(tables(app).schema.integrations).set({ providerId: 'removed-provider' }).where(eq(tables(app).schema.integrations.handle, 'gone'))
  response = await post('gone')
  t.equal(response.statusCode, 400)
  t.same(response.json(), envelope(400, 'Integration gone has no provider.', 'SHIPMENTS_GATEWAY_NO_PROVIDER'))
  t.same(counting.calls, [], 'the provider was never called for a refused request')

  // Read at request time: the same integration reaches the provider once the variable says so.
  process.env.GATEWAY_TEST_ENABLED = 'true'
  response = await post('env')
  t.equal(response.statusCode, 202, 'enabled through the environment at request time')
  t.same(response.json(), { counted: 1 })
  process.env.GATEWAY_TEST_ENABLED = 'off'
  response = await post('env')
  t.same(response.json(), envelope(400, 'Integration env is disabled.', 'SHIPMENTS_GATEWAY_INTEGRATION_DISABLED'), 'and disabled again at the next request')
  t.same(counting.calls, ['env'], 'called exactly once, while enabled')
})

t.test("the provider's response passes through unchanged", async (t) => {
  const app = await gatewayApp(t)
  await app.shipments.integrations.create({ name: 'Custom', handle: 'custom', providerId: 'echo', settings: { mode: 'custom-response' } })
  await app.shipments.integrations.create({ name: 'Own 400', handle: 'own-400', providerId: 'echo', settings: { mode: 'own-400' } })
  let response = await app.inject({ method: 'POST', url: gateway('custom'), payload: '{}' , headers: { 'content-type': 'application/json' } })
  t.equal(response.statusCode, 201)
  t.equal(response.headers['content-type'], 'text/xml; charset=utf-8')
  t.equal(response.headers['x-provider'], 'echo')
  t.equal(response.body, '<ok n="1"/>')
  response = await app.inject({ method: 'POST', url: gateway('own-400') })
  t.equal(response.statusCode, 400)
  t.same(response.json(), { problem: 'provider says no', extra: [1] }, 'not reshaped into the gateway error envelope')
})

t.test('the provider gets the raw bytes and headers, whatever the content type', async (t) => {
  const app = await gatewayApp(t)
  await app.shipments.integrations.create({ name: 'Echo', handle: 'echo', providerId: 'echo' })
  const bodies: Array<[string | undefined, string | Buffer]> = [
    ['application/json', '{"b": 1,   "a": [2]}'],
    ['application/json; charset=utf-8', '{not json at all'],
    ['text/xml', '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "boom">]><x>&e;</x>'],
    ['application/x-www-form-urlencoded', 'a=1&b=%20two'],
    ['multipart/form-data; boundary=zz', '--zz\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--zz--'],
    ['application/vnd.acme.event+cbor', Buffer.from([0xa1, 0x61, 0x61, 0x01, 0xff, 0x00])],
    ['', 'empty content type'],
    ['xml', 'a malformed content type Fastify alone would refuse with 415'],
    ['text/xml, application/json', 'two content types'],
    [undefined, 'no content type'],
  ]
  for (const [contentType, payload] of bodies) {
    const headers: Record<string, string> = { 'x-signature': 'sig-123' }
    if (contentType !== undefined) headers['content-type'] = contentType
    const response = await app.inject({ method: 'POST', url: `${gateway('echo')}&extra=1`, headers, payload })
    t.equal(response.statusCode, 200, `content type ${contentType}`)
    t.same(response.json(), {
      method: 'POST',
      contentType: contentType ?? null, // the headers as sent, an empty one included
      signature: 'sig-123',
      bodySha256: createHash('sha256').update(payload).digest('hex'),
      bodyLength: Buffer.byteLength(payload),
      query: { integration: 'echo', extra: '1' },
    })
  }
  for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'] as const) {
    const response = await app.inject({ method, url: gateway('echo') })
    t.equal(response.statusCode, 200, method)
    t.equal(response.json().method, method)
  }
})

t.test('413 beyond the body limit, and the provider is never called', async (t) => {
  const counting = countingProvider()
  const app = await gatewayApp(t, undefined, [echoProvider, counting.provider])
  await app.shipments.integrations.create({ name: 'Counted', handle: 'counted', providerId: 'counting' })
  for (const contentType of ['text/plain', 'application/json', 'application/vnd.unknown+xml', undefined]) {
    const response = await app.inject({
      method: 'POST',
      url: gateway('counted'),
      headers: contentType ? { 'content-type': contentType } : {},
      payload: 'x'.repeat(2049),
    })
    t.equal(response.statusCode, 413, `content type ${contentType}`)
    t.same(response.json(), envelope(413, 'Request body is too large', 'SHIPMENTS_BODY_TOO_LARGE'), `content type ${contentType}`)
  }
  t.same(counting.calls, [], 'the provider was never called')

  // At the limit it is.
  const atLimit = await app.inject({ method: 'POST', url: gateway('counted'), headers: { 'content-type': 'text/plain' }, payload: 'x'.repeat(2048) })
  t.equal(atLimit.statusCode, 202)
  t.same(atLimit.json(), { counted: 1 })
  t.same(counting.calls, ['counted'])
})

t.test('provider errors: an integration error shows its message, anything else a generic one; both logged', async (t) => {
  const logLines: string[] = []
  const app = await gatewayApp(t, logLines)
  await app.shipments.integrations.create({ name: 'E1', handle: 'e1', providerId: 'echo', settings: { mode: 'integration-error' } })
  await app.shipments.integrations.create({ name: 'E2', handle: 'e2', providerId: 'echo', settings: { mode: 'crash' } })

  let response = await app.inject({ method: 'POST', url: gateway('e1') })
  t.equal(response.statusCode, 400)
  t.same(response.json(), { name: 'Bad Request', message: 'Signature mismatch for echo.', code: 0, status: 400, errorCode: 'SHIPMENTS_INTEGRATION_ERROR' })
  response = await app.inject({ method: 'POST', url: gateway('e2') })
  t.equal(response.statusCode, 400)
  t.same(response.json(), { name: 'Bad Request', message: 'Integration request processing failed.', code: 0, status: 400, errorCode: 'SHIPMENTS_GATEWAY_REQUEST_FAILED' })
  t.notMatch(response.body, /exploded|hunter2|at /, 'the original error stays in the log')

  // A refused request (IntegrationError) is a warning with the reason and no stack; any other failure
  // is logged at error level with the original error and its stack.
  const entries = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.integration === 'e1' || entry.integration === 'e2')
  const refused = entries.filter((entry) => entry.integration === 'e1')
  t.same(refused.map((entry) => [entry.level, entry.reason, entry.provider, 'err' in entry]), [[40, 'Signature mismatch for echo.', 'echo', false]])
  t.notMatch(JSON.stringify(refused), /\n\s+at /, 'no stack trace for a refused request')
  const failed = entries.filter((entry) => entry.integration === 'e2')
  t.same(failed.map((entry) => [entry.level, entry.provider, entry.err?.message]), [[50, 'echo', 'database exploded: secret=hunter2']])
  t.match(failed[0].err.stack, /database exploded[^]*\n\s+at /, 'the original error with its stack')
})

t.test('integrations: validated when saved, secrets masked, external references kept', async (t) => {
  const app = await gatewayApp(t)
  const { integrations } = app.shipments
  const fail = (input: Parameters<typeof integrations.create>[0], message: RegExp) =>
    t.rejects(integrations.create(input), { name: 'IntegrationConfigError', message }, message.source)

  await fail({ name: 'X', handle: 'Bad Handle', providerId: 'echo' }, /^handle:/)
  await fail({ name: '', handle: 'x', providerId: 'echo' }, /^name:/)
  await fail({ name: 'X', handle: 'x', providerId: 'nope' }, /^providerId: no provider "nope"/)
  await fail({ name: 'X', handle: 'x', providerId: 'signed-webhook', settings: {} }, /^settings.*secret/)
  await fail({ name: 'X', handle: 'x', providerId: 'signed-webhook', settings: { secret: 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=', toleranceSeconds: 0 } }, /^settings\.toleranceSeconds:/)
  await fail({ name: 'X', handle: 'x', providerId: 'signed-webhook', settings: { secret: '$UNSET_TEST_SECRET' } }, /^settings\.secret: Environment variable UNSET_TEST_SECRET is not set$/)
  await fail({ name: 'X', handle: 'x', providerId: 'echo', statusMap: { DONE: 'finished' } }, /^statusMap\.DONE: "finished" is not a shipment status/)
  await fail({ name: 'X', handle: 'x', providerId: 'echo', enabled: 'maybe' }, /^enabled:/)

  const created = await integrations.create({ name: 'Hooks', handle: 'hooks', providerId: 'signed-webhook', settings: { secret: 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=' }, statusMap: { in_transit: 'shipped' } })
  t.match(created, { handle: 'hooks', enabled: true, providerId: 'signed-webhook', settings: { secret: '********' }, statusMap: { in_transit: 'shipped' } })
  await fail({ name: 'Again', handle: 'hooks', providerId: 'echo' }, /^handle: "hooks" is already used/)
  t.equal((await tables(app).db.select().from(tables(app).schema.integrations)).length, 1, 'failed saves stored nothing')

  const updated = await integrations.update('hooks', { settings: { secret: '********', toleranceSeconds: 60 } })
  t.same(updated.settings, { secret: '********', toleranceSeconds: 60 })
  t.equal((await integrations.findStored('hooks'))!.settings.secret, 'whsec_YS1zaWduaW5nLXNlY3JldC1mb3ItdGhlLXRlc3RzISE=', 'a masked secret keeps the stored one')
  t.same((await integrations.list()).map((integration) => integration.handle), ['hooks'])

  process.env.TEST_HOOK_SECRET = 'whsec_YW5vdGhlci1zaWduaW5nLXNlY3JldC1mb3ItdGVzdHM='
  const viaEnv = await integrations.update('hooks', { settings: { secret: '$TEST_HOOK_SECRET' } })
  t.equal(viaEnv.settings.secret, '$TEST_HOOK_SECRET', 'an environment reference is shown, it is not the secret')
  delete process.env.TEST_HOOK_SECRET

  const shipmentOrder = (await tables(app).db.insert(tables(app).schema.orders).values({ number: 'n1', reference: 'R1' }).returning())[0]
  const [shipment] = await app.shipments.shipments.create(shipmentOrder.id)
  await integrations.setExternalReference(shipment.id, 'hooks', { externalId: 'EXT-9', externalUrl: 'https://carrier.example/EXT-9' })
  t.same(await integrations.externalReferences(shipment.id), [
    { integrationHandle: 'hooks', externalId: 'EXT-9', externalUrl: 'https://carrier.example/EXT-9', lastPushAt: null, lastPushError: null, pushAttempts: 0 },
  ])

  t.same(await integrations.checkConnection('hooks'), { ok: true, message: 'The provider has no connection check.' })
  await integrations.remove('hooks')
  t.equal(await integrations.get('hooks'), null)
})

t.test('provider ids are unique: the option and register() both refuse a duplicate', async (t) => {
  const app = await gatewayApp(t)
  t.throws(() => app.shipments.providers.register(echoProvider), { name: 'DuplicateProviderError' })
  t.same(app.shipments.providers.list().map((provider) => provider.id), ['signed-webhook', 'easypost', 'aftership', 'echo'])
})

t.test('integration changes reach the gateway: at once from this process, within GATEWAY_CROSS_PROCESS_MS from another', async (t) => {
  const { GATEWAY_CROSS_PROCESS_MS } = await import('../src/gateway/integrations.js')
  const app = await gatewayApp(t)
  await app.shipments.integrations.create({ name: 'Echo', handle: 'cached', providerId: 'echo' })
  const post = () => app.inject({ method: 'POST', url: gateway('cached'), payload: 'x' })
  t.equal((await post()).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: gateway('later'), payload: 'x' })).statusCode, 404, 'an unknown handle (now remembered as unknown)')
  await app.shipments.integrations.create({ name: 'Later', handle: 'later', providerId: 'echo' })
  t.equal((await app.inject({ method: 'POST', url: gateway('later'), payload: 'x' })).statusCode, 200, 'created here: found at once')
  await app.shipments.integrations.update('cached', { enabled: false })
  t.equal((await post()).statusCode, 400, 'disabled here: refused at once')
  await app.shipments.integrations.update('cached', { enabled: true })
  t.equal((await post()).statusCode, 200)

  const other = await otherConnection(t, app)
  await other(`UPDATE shipments_integrations SET enabled = 'false', updated_at = ? WHERE handle = 'cached'`, [TEST_ENGINE === 'sqlite' ? Date.now() + 1 : new Date(Date.now() + 1)])
  await new Promise((resolve) => setTimeout(resolve, GATEWAY_CROSS_PROCESS_MS + 50))
  const refused = await post()
  t.equal(refused.statusCode, 400, 'disabled by another process: refused once the check interval has passed')
  t.equal(refused.json().message, 'Integration cached is disabled.')
  await other(`DELETE FROM shipments_integrations WHERE handle = 'later'`)
  await new Promise((resolve) => setTimeout(resolve, GATEWAY_CROSS_PROCESS_MS + 50))
  t.equal((await app.inject({ method: 'POST', url: gateway('later'), payload: 'x' })).statusCode, 404, 'removed by another process')
})

t.test('handles a database cannot hold (a NUL) are unknown integrations, and lists sort by bytes on every engine', async (t) => {
  const app = await gatewayApp(t)
  const response = await app.inject({ method: 'POST', url: gateway('a\u0000b'), payload: 'x' })
  t.equal(response.statusCode, 404)
  t.same(response.json(), { name: 'Not Found', message: 'Unknown integration: a\u0000b', code: 0, status: 404, errorCode: 'SHIPMENTS_GATEWAY_UNKNOWN_INTEGRATION' })
  for (const handle of ['ab', 'a-c', 'b', 'a_b']) await app.shipments.integrations.create({ name: handle, handle, providerId: 'echo' })
  t.same((await app.shipments.integrations.list()).map((integration) => integration.handle), ['a-c', 'a_b', 'ab', 'b'])
})

t.test('a value the update refuses inside a provider is a 400 naming the field, logged as a warning without stack (issue 20)', async (t) => {
  // A README-style provider that passes what the sender sent straight to the update path.
  const passThroughProvider = defineProvider({
    id: 'pass-through',
    settingsSchema: Type.Object({}),
    async handleGatewayRequest(request, context) {
      const body = JSON.parse(request.rawBody.toString('utf8')) as { shipmentId: number; state?: string; trackingNumber?: string }
      const result = await context.shipments.update(body.shipmentId, { status: body.state as ShipmentStatus | undefined, trackingNumber: body.trackingNumber })
      return { body: { status: result.shipment.status } }
    },
  })
  const logLines: string[] = []
  const app = await gatewayApp(t, logLines, [passThroughProvider])
  await app.shipments.integrations.create({ name: 'Pass', handle: 'pass', providerId: 'pass-through' })
  const { db, schema: tablesSchema } = tables(app)
  const [order] = await db.insert(tablesSchema.orders).values({ number: 'n-1', reference: 'R-1', dateUpdated: new Date() }).returning()
  const [shipment] = await app.shipments.shipments.create(order.id)

  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['NUL in a tracking number', { shipmentId: shipment.id, trackingNumber: 'AB\u0000C' }, 'Invalid webhook payload: trackingNumber: '],
    ['an unmapped state passed as a status', { shipmentId: shipment.id, state: 'DISPATCHED' }, 'Invalid webhook payload: targetStatusCode: Target Status Code is invalid.'],
    ['a shipment that is not there', { shipmentId: 99999 }, 'Shipment 99999 not found.'],
  ]
  for (const [name, body, message] of cases) {
    const response = await app.inject({ method: 'POST', url: gateway('pass'), payload: body })
    t.equal(response.statusCode, 400, name)
    t.equal(response.json().name, 'Bad Request', name)
    t.ok(response.json().message.startsWith(message), `${name}: ${response.json().message}`)
  }
  const [stored] = await db.select().from(tablesSchema.shipments).where(eq(tablesSchema.shipments.id, shipment.id))
  t.match(stored, { status: 'new', trackingNumber: null }, 'nothing was stored')
  const entries = logLines.map((line) => JSON.parse(line)).filter((entry) => entry.integration === 'pass')
  t.same(entries.map((entry) => entry.level), [40, 40, 40], 'three warnings, no error')
  t.notOk(entries.some((entry) => 'err' in entry), 'without an error object or stack')
})
