import Database from 'better-sqlite3'
const db = new Database(process.argv[2], { readonly: true })
for (const q of ['select * from shipments_shipments where date_deleted is null order by id limit 50', "select * from shipments_shipments where status = 'in_progress' and date_deleted is null order by id limit 50"]) {
  console.log(q, db.prepare('explain query plan ' + q).all().map((r: any) => r.detail))
  const t0 = performance.now(); for (let i = 0; i < 5; i++) db.prepare(q).all(); console.log(((performance.now() - t0) / 5).toFixed(2))
}
