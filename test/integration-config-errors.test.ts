// Saving an integration reports every problem at once, each under its field; a signed-webhook secret
// that is not base64 of at least 24 bytes is refused; an `enabled` that reads an unset variable is
// named in the log. Regressions: IntegrationConfigError named only the first bad field, a password
// typed as the secret was accepted (its "base64" decoded to a few bytes of garbage), and `enabled:
// '$VAR'` with the variable unset made the gateway answer "disabled" with nothing in the log.
import t from 'tap'
import { Type } from '@sinclair/typebox'
import { defineProvider, IntegrationConfigError, signWebhook } from '../src/index.js'
import { buildTestApp } from './fixtures/app.js'
import { tables } from './fixtures/database.js'
import { adminClient, buildAdminApp, fieldMarkup } from './fixtures/admin.js'

const SECRET = `whsec_${Buffer.from('a-signing-secret-of-32-bytes-ok!').toString('base64')}`

const strictProvider = defineProvider({
  id: 'strict',
  settingsSchema: Type.Object({ token: Type.String({ minLength: 16 }), region: Type.Union([Type.Literal('eu'), Type.Literal('us')]), retries: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
  async handleGatewayRequest() {
    return { status: 200 }
  },
})

t.test('IntegrationConfigError names every problem: each top-level field and every setting, with .fields', async (t) => {
  const app = await buildTestApp(t, { providers: [strictProvider] })
  await app.shipments.integrations.create({ name: 'Taken', handle: 'taken', providerId: 'strict', settings: { token: 'x'.repeat(16), region: 'eu', retries: 1 } })
  delete process.env.UNSET_STRICT_TOKEN_25

  const error = await app.shipments.integrations
    .create({
      name: ' ',
      handle: 'taken',
      enabled: 'maybe',
      providerId: 'strict',
      statusMap: { DONE: 'finished' },
      outboundStatusMap: { shipped: '' },
      pushOn: ['shipped'],
      settings: { token: 'short', region: 'mars', retries: -1, extra: 'x' },
    })
    .then(
      () => null,
      (error: unknown) => error,
    )
  t.ok(error instanceof IntegrationConfigError)
  const { fields, message } = error as IntegrationConfigError
  t.same(Object.keys(fields), [
    'name',
    'handle',
    'enabled',
    'statusMap.DONE',
    'outboundStatusMap.shipped',
    'pushOn',
    'settings.extra',
    'settings.token',
    'settings.region',
    'settings.retries',
  ], 'every field with a problem: the top-level ones in the order of the form, then the schema\'s')
  t.same(fields.name, ['must not be empty'])
  t.same(fields.handle, ['"taken" is already used'])
  t.same(fields['statusMap.DONE'], ['"finished" is not a shipment status'])
  t.same(fields.pushOn, ['the provider "strict" has no pushShipment()'])
  t.equal(fields['settings.token']!.length, 1, 'one message per setting')
  t.match(fields['settings.token']![0], /length greater or equal to 16/)
  for (const field of Object.keys(fields)) t.match(message, `${field}: `, `the message names ${field}`)
  t.match(message, /^name: must not be empty; handle: "taken" is already used; enabled: /)
  t.equal((await tables(app).db.select().from(tables(app).schema.integrations)).length, 1, 'nothing stored')

  // An unset variable is named under its own setting, and the schema does not refuse that setting again.
  await t.rejects(
    app.shipments.integrations.create({ name: 'Env', handle: 'env', providerId: 'strict', settings: { token: '$UNSET_STRICT_TOKEN_25', region: 'eu', retries: 0 } }),
    { name: 'IntegrationConfigError', message: 'settings.token: Environment variable UNSET_STRICT_TOKEN_25 is not set', fields: { 'settings.token': ['Environment variable UNSET_STRICT_TOKEN_25 is not set'] } },
  )
  // Errors raised with one "field: message" text carry it as their one field.
  t.same(new IntegrationConfigError('handle: no integration "x"').fields, { handle: ['no integration "x"'] })
  t.same(new IntegrationConfigError('no field here').fields, { integration: ['no field here'] })
})

t.test('the admin form shows each problem beside its field', async (t) => {
  const app = await buildAdminApp(t)
  const admin = adminClient(app, 'admin')
  await admin.get('/integrations/new?provider=signed-webhook')
  const refused = await admin.post('/integrations', {
    providerId: 'signed-webhook',
    name: '',
    handle: 'Not Valid',
    enabled: 'true',
    'settings.secret': 'hunter2',
    'settings.toleranceSeconds': '0',
  })
  t.equal(refused.statusCode, 422)
  t.match(fieldMarkup(refused.body, 'name'), /field-error[^]*must not be empty/)
  t.match(fieldMarkup(refused.body, 'handle'), /field-error[^]*lowercase letters, digits/)
  t.match(fieldMarkup(refused.body, 'settings.secret'), /field-error[^]*must be base64 of at least 24 bytes/)
  t.match(fieldMarkup(refused.body, 'settings.toleranceSeconds'), /field-error/)
  t.same(await app.shipments.integrations.list(), [], 'nothing was created')
})

t.test('a signed-webhook secret that is not base64 of at least 24 bytes is refused when saved', async (t) => {
  const app = await buildTestApp(t)
  const { integrations } = app.shipments
  const save = (secret: string) => integrations.create({ name: 'Hooks', handle: 'hooks', providerId: 'signed-webhook', settings: { secret } })
  for (const secret of [
    'hunter2',
    'correct horse battery staple, a long passphrase',
    `whsec_${Buffer.alloc(23, 1).toString('base64')}`,
    `whsec_${Buffer.alloc(32, 1).toString('base64')}!`,
    `whsec_${Buffer.alloc(32, 1).toString('base64url')}_-`,
    `whsec_ ${Buffer.alloc(32, 1).toString('base64')}`,
  ]) {
    await t.rejects(save(secret), { name: 'IntegrationConfigError', fields: { 'settings.secret': [/^must be base64 of at least 24 bytes/] } }, secret)
  }
  t.same(await integrations.list(), [], 'nothing stored')

  for (const secret of [SECRET, Buffer.alloc(24, 2).toString('base64'), `whsec_${Buffer.alloc(64, 3).toString('base64')}`, Buffer.alloc(25, 4).toString('base64').replace(/=+$/, '')]) {
    const created = await save(secret)
    t.match(created.settings, { secret: '********' }, `accepted: ${secret.slice(0, 12)}...`)
    await integrations.remove('hooks')
  }

  // A secret read from the environment is checked as it resolves.
  process.env.WEAK_HOOK_SECRET_25 = 'password1'
  await t.rejects(save('$WEAK_HOOK_SECRET_25'), { name: 'IntegrationConfigError', fields: { 'settings.secret': [/^must be base64/] } })
  process.env.WEAK_HOOK_SECRET_25 = SECRET
  t.match(await save('$WEAK_HOOK_SECRET_25'), { settings: { secret: '$WEAK_HOOK_SECRET_25' } })
})

t.test("enabled: '$VAR' with the variable unset: the gateway answers disabled and warns once, naming the variable", async (t) => {
  delete process.env.HOOKS_ENABLED_UNSET_25
  const logLines: string[] = []
  const app = await buildTestApp(t, {}, undefined, logLines)
  await app.shipments.integrations.create({ name: 'Hooks', handle: 'hooks', providerId: 'signed-webhook', enabled: '$HOOKS_ENABLED_UNSET_25', settings: { secret: SECRET } })
  const send = () => {
    const timestamp = Math.floor(Date.now() / 1000)
    const body = '{}'
    return app.inject({
      method: 'POST',
      url: '/actions/shipments/gateway/handle?integration=hooks',
      headers: { 'content-type': 'application/json', 'webhook-id': 'm1', 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(SECRET, 'm1', timestamp, body) },
      payload: body,
    })
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    const response = await send()
    t.equal(response.statusCode, 400)
    t.equal(response.json().message, 'Integration hooks is disabled.')
  }
  const warnings = logLines.map((line) => JSON.parse(line) as { level: number; msg: string; variable?: string; integration?: string }).filter((entry) => entry.variable !== undefined)
  t.same(
    warnings.map((entry) => [entry.level, entry.integration, entry.variable, entry.msg]),
    [[40, 'hooks', 'HOOKS_ENABLED_UNSET_25', 'Integration hooks is disabled: its enabled setting reads the environment variable HOOKS_ENABLED_UNSET_25, which is not set']],
    'one warning for three requests',
  )

  process.env.HOOKS_ENABLED_UNSET_25 = 'false'
  t.equal((await send()).json().message, 'Integration hooks is disabled.', 'a variable set to false is off, as it says')
  process.env.HOOKS_ENABLED_UNSET_25 = 'true'
  t.not((await send()).json().message, 'Integration hooks is disabled.', 'set to true: on, read at every request')
  delete process.env.HOOKS_ENABLED_UNSET_25
  t.equal(logLines.filter((line) => line.includes('HOOKS_ENABLED_UNSET_25')).length, 1, 'nothing more logged about it')
})
