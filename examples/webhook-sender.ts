// Signs and posts one shipment event to the gateway, as a carrier or 3PL would (Standard Webhooks).
//   npx tsx examples/webhook-sender.ts --order 1001 --status in_transit --tracking 1Z999 [--shipment 1]
import { randomUUID } from 'node:crypto'
import { parseArgs } from 'node:util'
import { signWebhook } from '../src/index.js'
import { DEMO_WEBHOOK_SECRET } from './demo-integrations.js'

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:3000/actions/shipments/gateway/handle?integration=demo-webhooks' },
    secret: { type: 'string', default: process.env.DEMO_WEBHOOK_SECRET ?? DEMO_WEBHOOK_SECRET },
    order: { type: 'string', default: '1001' },
    shipment: { type: 'string' },
    status: { type: 'string', default: 'in_transit' },
    tracking: { type: 'string' },
    carrier: { type: 'string' },
    'occurred-at': { type: 'string' },
  },
})

const body = JSON.stringify({
  orderNumber: values.order,
  shipmentNumber: values.shipment,
  status: values.status,
  occurredAt: values['occurred-at'] ?? new Date().toISOString(),
  trackingNumber: values.tracking,
  carrier: values.carrier,
})
const deliveryId = `msg_${randomUUID()}`
const timestamp = Math.floor(Date.now() / 1000)

const response = await fetch(values.url!, {
  method: 'POST',
  headers: {
    'content-type': 'application/json',
    'webhook-id': deliveryId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(values.secret!, deliveryId, timestamp, body),
  },
  body,
})
console.log(response.status, await response.text())
