// PostgreSQL group commit (the `groupCommit` option, off by default): the same loads of status changes
// and carrier events against a host with it on and the main host without it, seeded alike, alternating
// round by round; throughput on over off, and each load's p99 latency on over off from the same runs.
import { startHost } from '../hosts.js'
import { compare, recordFigure } from '../runner.js'
import { wanted, type Label } from '../settings.js'
import { seedShipments, writeLoads, type WriteLoads } from './requests.js'

export async function measureGroupCommit(label: Label, withoutLoads: WriteLoads) {
  const names = {
    status: label('status changes with group commit / without (same load, same server)'),
    events: label('EasyPost events applied with group commit / without'),
  }
  if (!Object.values(names).some(wanted)) return
  const shipmentIds: number[] = []
  const trackedIds: number[] = []
  const grouped = await startHost('postgres', 'grouped', { groupCommit: true }, (app) => seedShipments(app, shipmentIds, trackedIds))
  try {
    const withLoads = writeLoads(grouped, shipmentIds, trackedIds)
    for (const [name, measured, against] of [
      [names.status, withLoads.statusChanges, withoutLoads.statusChanges],
      [names.events, withLoads.carrierEvents, withoutLoads.carrierEvents],
    ] as const) {
      const rounds = await compare(name, { min: 1.0 }, measured, against)
      if (rounds.length === 0) continue
      const p99 = rounds.map((round) => round.measured.latencyP99Ms / round.against.latencyP99Ms)
      recordFigure(`${name}: p99 latency`, { measured: 'p99 with group commit', against: 'p99 without', unit: 'x' }, p99, { max: 1.5 })
    }
  } finally {
    await grouped.app.close()
  }
}
