import Fastify from 'fastify'
import { fastifyShipments } from './src/index.ts'
const app = Fastify()
await app.register(fastifyShipments, { database: process.argv[2], resolveUser: () => ({ id: 'a' }), hasPermission: () => true, admin: {} })
await app.ready()
const db = (app.shipments.database as any).db.$client
const time = async (name: string, fn: () => unknown) => { await fn(); const t0 = performance.now(); for (let i = 0; i < 5; i++) await fn(); console.log(name, ((performance.now() - t0) / 5).toFixed(2)) }
await time('list', () => app.shipments.shipments.list({ perPage: 50 }))
await time('counts', () => db.prepare('select status, sum(count) from shipments_status_counts group by status').all())
await time('late', () => db.prepare("select count(*) from shipments_shipments where enabled = 1 AND date_deleted IS NULL AND status NOT IN ('shipped', 'cancelled') AND date_scheduled_ship IS NOT NULL and date_scheduled_ship < ?").all(Date.now()))
await time('shipped', () => db.prepare("select date_shipped / 900000, count(*) from shipments_shipments where date_deleted is null and date_shipped >= ? and date_shipped < ? group by 1").all(Date.now() - 30 * 86400000, Date.now()))
await time('inject list', () => app.inject({ url: '/shipments/admin/shipments' }))
await time('inject overview', () => app.inject({ url: '/shipments/admin/overview' }))
await app.close()
