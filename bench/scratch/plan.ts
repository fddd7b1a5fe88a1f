import Database from 'better-sqlite3'
const c = new Database('/tmp/perf-scratch-200000.sqlite')
const w = "o.is_completed = 1 AND o.export_problem IS NULL AND o.date_updated < @before AND o.date_updated >= @after"
const p = { before: Date.UTC(2030, 0, 1), after: Date.UTC(2020, 0, 1) }
for (const q of [
  `SELECT count(*) FROM shipments_orders o INDEXED BY shipments_orders_exportable_idx WHERE ${w}`,
  `SELECT count(*) FROM shipments_orders o INDEXED BY shipments_orders_exportable_idx WHERE o.is_completed = 1 AND o.export_problem IS NULL`,
  `SELECT count(*) FROM shipments_orders o INDEXED BY shipments_orders_exportable_idx WHERE o.is_completed = 1 AND o.export_problem IS NULL AND o.date_updated < @before AND o.date_updated >= @after`,
  `SELECT count(*) FROM shipments_orders o WHERE o.is_completed = 1 AND o.date_updated < @before AND o.date_updated >= @after`,
]) {
  const s = c.prepare(q)
  console.log(c.prepare('EXPLAIN QUERY PLAN ' + q).all(q.includes('@') ? p : {}).map((r: any) => r.detail).join(' | '))
  for (let i = 0; i < 3; i++) { const t0 = performance.now(); s.get(q.includes('@') ? p : {}); console.log('  ', (performance.now() - t0).toFixed(2), 'ms') }
}
