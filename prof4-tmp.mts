import Fastify from 'fastify'
import { fastifyShipments } from './src/index.ts'
const app = Fastify()
await app.register(fastifyShipments, { database: process.argv[2], resolveUser: () => ({ id: 'a' }), hasPermission: () => true, admin: {} })
await app.ready()
const time = async (name: string, fn: () => unknown) => { await fn(); const t0 = performance.now(); for (let i = 0; i < 10; i++) await fn(); console.log(name, ((performance.now() - t0) / 10).toFixed(2)) }
await time('list 1', () => app.shipments.shipments.list({ perPage: 1 }))
await time('list 50', () => app.shipments.shipments.list({ perPage: 50 }))
await time('list 50 status', () => app.shipments.shipments.list({ perPage: 50, status: 'on_hold' }))
await time('get', () => app.shipments.shipments.get(5))
await app.close()
