// The figure of a transition's latency with the default lock directory against none (SQLite only).
import { startHost } from '../hosts.js'
import { compare, plan } from '../runner.js'
import type { Engine, Label } from '../settings.js'
import { seedShipments } from './requests.js'

/** The host without a lock directory, seeded as the main host is; none on PostgreSQL. */
export async function startInProcessLockHost(engine: Engine, inProcessShipmentIds: number[]) {
  // The lock figure compares the default lock directory with none: transitions take no lock file any
  // more (the IMMEDIATE transaction is the cross-process half), so the two should cost the same.
  return engine === 'sqlite' ? await startHost(engine, 'in-process-lock', { lockDirectory: null }, (app) => seedShipments(app, inProcessShipmentIds)) : null
}

export async function measureLockDirectory(label: Label, host: { base: string }, shipmentIds: number[], inProcessLockHost: { base: string }, inProcessShipmentIds: number[]) {
  await compare(
    label('transition latency: default lockDirectory / lockDirectory null'),
    { max: 1.5 },
    plan(host.base, { transitions: { pathPrefix: '/shipments/api/shipments', shipmentIds, statuses: ['fulfilled', 'new'] } }),
    plan(inProcessLockHost.base, { transitions: { pathPrefix: '/shipments/api/shipments', shipmentIds: inProcessShipmentIds, statuses: ['fulfilled', 'new'] } }),
    'latency',
  )
}
