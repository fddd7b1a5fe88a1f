import t from 'tap'
import { buildDemoHost } from '../examples/demo-host.js'
import { DEMO_WEBHOOK_SECRET } from '../examples/demo-integrations.js'
import { signWebhook } from '../src/index.js'
import { testDatabase } from './fixtures/database.js'
import { DEMO_SHIPSTATION_PASSWORD, DEMO_SHIPSTATION_USERNAME } from '../examples/demo-host.js'

t.test('no secret appears in any log line of a busy demo host', async (t) => {
  const lines: string[] = []
  const app = await buildDemoHost({
    database: await testDatabase(t, 'demo'),
    logger: { level: 'trace', stream: { write: (line: string) => void lines.push(line) } },
  })
  t.teardown(() => app.close())

  const login = await app.inject({ method: 'POST', url: '/login', payload: { username: 'admin', password: 'admin' } })
  const session = login.cookies.find((cookie) => cookie.name === 'demo_session')!
  const cookie = `${session.name}=${session.value}`
  await app.inject({ method: 'POST', url: '/shipments/api/shipments/1', headers: { cookie, 'content-type': 'application/json' }, payload: '{"status":"bogus"}' })
  await app.inject({ method: 'POST', url: '/shipments/api/shipments/1', headers: { cookie, 'content-type': 'application/json' }, payload: '{"carrier":"UPS"' })
  await app.inject({ url: '/shipments/api/shipments/1/history', headers: { cookie } })

  const body = JSON.stringify({ orderNumber: '1001', status: 'in_transit', occurredAt: new Date().toISOString() })
  const timestamp = Math.floor(Date.now() / 1000)
  for (const secret of [DEMO_WEBHOOK_SECRET, 'whsec_' + Buffer.from('wrong').toString('base64')]) {
    await app.inject({
      method: 'POST',
      url: '/actions/shipments/gateway/handle?integration=demo-webhooks',
      headers: { 'webhook-id': `m-${secret.length}`, 'webhook-timestamp': String(timestamp), 'webhook-signature': signWebhook(secret, `m-${secret.length}`, timestamp, body) },
      payload: body,
    })
  }
  await app.inject({ method: 'POST', url: '/actions/shipments/gateway/handle?integration=acme-3pl', headers: { authorization: 'Bearer demo-acme-token-change-me' }, payload: '{' })

  const exchange = '/actions/shippingplatformconnect/orders/process'
  const basic = `Basic ${Buffer.from(`${DEMO_SHIPSTATION_USERNAME}:${DEMO_SHIPSTATION_PASSWORD}`).toString('base64')}`
  await app.inject({ url: `${exchange}?action=export`, headers: { authorization: basic } })
  await app.inject({ url: `${exchange}?action=export&SS-UserName=${DEMO_SHIPSTATION_USERNAME}&SS-Password=${DEMO_SHIPSTATION_PASSWORD}` })
  await app.inject({ url: `${exchange}?action=export&SS-UserName=${DEMO_SHIPSTATION_USERNAME}&SS-Password=${DEMO_SHIPSTATION_PASSWORD}x` })
  await app.inject({ method: 'POST', url: `${exchange}?action=shipnotify&order_number=1001&carrier=UPS`, headers: { authorization: basic }, payload: '<ShipNotice/>' })

  t.ok(lines.length > 10, `${lines.length} log lines captured`)
  const secrets = [
    session.value,
    DEMO_WEBHOOK_SECRET,
    DEMO_WEBHOOK_SECRET.slice('whsec_'.length),
    'demo-webhook-secret-change-me',
    'demo-acme-token-change-me',
    '"password":"admin"',
    DEMO_SHIPSTATION_PASSWORD,
    basic.slice('Basic '.length),
  ]
  for (const secret of secrets) {
    t.notOk(lines.some((line) => line.includes(secret)), `never logged: ${secret.slice(0, 12)}…`)
  }
})
