// `npm run bench`: each figure is a ratio of two things measured in this run, under autocannon run as
// a separate process against servers on loopback. Prints a table and writes the figures as JSON.
// This module composes the figures' groups (bench/figures/) for each engine, in the order of the
// table: their hosts start first, all of them, then the figures run in turn on the shared runner.
import { cpus, loadavg } from 'node:os'
import { removeBenchDatabases, startHost } from './hosts.js'
import { reportFigures } from './runner.js'
import { CONNECTIONS, ENGINES, ROUNDS, SECONDS, wanted, type Engine } from './settings.js'
import { measureDocuments, seedPickOrders } from './figures/documents.js'
import { measureExport, startExportHosts } from './figures/export.js'
import { labelFigureWanted, measureLabelPurchase, startLabelHost } from './figures/labels.js'
import { measureItemCreation, startItemsHost } from './figures/line-items.js'
import { measureLockDirectory, startInProcessLockHost } from './figures/lock-directory.js'
import { measurePostgresCeilings } from './figures/postgres-replay.js'
import { measureGatewayDispatch, measureWrites, seedShipments, writeLoads } from './figures/requests.js'
import { measureReturns, RETURNABLE_ORDERS, seedReturnableOrders } from './figures/returns.js'
import { measureBatches } from './figures/batches.js'
import { measureGroupCommit } from './figures/group-commit.js'

console.log(
  `fastify-shipments bench: autocannon ${CONNECTIONS} connections, ${SECONDS} s per measurement, median of ${ROUNDS} rounds, ${cpus().length} cores, Node ${process.version}, load average ${loadavg().map((each) => each.toFixed(2)).join(' ')}`,
)
async function measureEngine(engine: Engine) {
  console.log(`\n${engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'}:`)
  const label = (name: string) => `${engine}: ${name}`
  const shipmentIds: number[] = []
  const trackedIds: number[] = []
  const inProcessShipmentIds: number[] = []
  const returnable: Array<[number, number]> = []
  const pickShipments: number[] = []
  const wantReturns = wanted(label('return request'))
  const wantDocuments = wanted(label('packing slip')) || wanted(label('pick list'))
  const host = await startHost(engine, 'main', {}, async (app) => {
    await seedShipments(app, shipmentIds, trackedIds)
    if (wantReturns) await seedReturnableOrders(app, RETURNABLE_ORDERS, returnable)
    if (wantDocuments) await seedPickOrders(app, 200, pickShipments)
  })
  const inProcessLockHost = await startInProcessLockHost(engine, inProcessShipmentIds)
  const itemsHost = await startItemsHost(engine)
  const labelHost = labelFigureWanted() ? await startLabelHost(engine) : null
  const exportHosts = await startExportHosts(engine)
  const { exportLarge, exportSmall, exportHuge } = exportHosts

  try {
    const loads = writeLoads(host, shipmentIds, trackedIds)
    await measureWrites(label, host, loads, trackedIds)
    if (engine === 'postgres') await measurePostgresCeilings(engine, label, shipmentIds, loads)
    if (engine === 'postgres') await measureGroupCommit(label, loads)
    await measureGatewayDispatch(label, host)
    await measureItemCreation(label, itemsHost)
    if (labelHost) await measureLabelPurchase(label, labelHost)
    await measureReturns(label, host, returnable)
    await measureDocuments(label, host, pickShipments)
    if (inProcessLockHost) await measureLockDirectory(label, host, shipmentIds, inProcessLockHost, inProcessShipmentIds)
    await measureExport(label, exportHosts)
    await measureBatches(engine, label)
  } finally {
    for (const started of [host, inProcessLockHost, itemsHost, exportLarge, exportSmall, exportHuge]) await started?.app.close()
    await labelHost?.close()
  }
}

try {
  for (const engine of ENGINES) await measureEngine(engine)
} finally {
  await removeBenchDatabases()
}

reportFigures()
