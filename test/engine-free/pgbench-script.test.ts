// The bench's conversion of captured statements into a pgbench script (bench/pgbench-script.ts): the
// PostgreSQL ceiling of the bench is only as true as this conversion, so a broken one fails here, not
// only in a bench run nobody reads. Pure: no database.
import t from 'tap'
import { pgbenchScript, sqlLiteral, type CapturedStatement, type ScriptRequest } from '../../bench/pgbench-script.js'

const statement = (text: string, values: unknown[], fields: string[] = [], firstRow: unknown[] | null = null): CapturedStatement => ({
  text,
  values,
  name: null,
  fields,
  firstRow,
  rowCount: firstRow ? 1 : 0,
})

/** A status change as the package sends it on PostgreSQL: the read (version, history id), then the change. */
function change(id: number, version: string, historyId: number, messageId: string, dedupe: string): ScriptRequest {
  return {
    id,
    statements: [
      statement('SELECT id, status, xmin::text, nextval(\'h\')::int FROM s WHERE id = $1', [id], ['id', 'status', 'xmin', 'nextval'], [id, 'new', version, historyId]),
      statement('BEGIN', []),
      statement(
        'INSERT INTO h (id, shipment_id, from_status, to_status, at) SELECT $1, $2, $3, $4, $5 FROM s WHERE id = $2 AND xmin = $6::xid',
        [historyId, id, 'new', 'in_progress', new Date(Date.UTC(2026, 10, 26, 18, 0, id)), version],
      ),
      statement('INSERT INTO o (message_id, ordering_key, payload, dedupe, note, flag, tags) VALUES ($1, $2, $3::json, $4, $5, $6, $7)', [
        messageId,
        `shipment:${id}`,
        JSON.stringify({ id, status: 'in_progress', carrier: null }),
        dedupe,
        "it's",
        true,
        ['a', 'b"c'],
      ]),
      statement('COMMIT', []),
    ],
  }
}

t.test('a captured change becomes a script over random shipments, with the values that must differ per transaction made anew', async (t) => {
  const script = pgbenchScript(
    [
      change(11, '801', 6, '01a21905-7abd-7e8c-8b68-ed2db95fa239', 'GNg7zjnXMZJZjl1ReWIXtelAeoAqYaBz'),
      change(12, '802', 7, '01a21905-7af4-7674-a56c-a9b637e19f4d', 'Q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6'),
    ],
    { first: 1, last: 1000 },
  )
  const lines = script.split('\n')
  t.equal(lines[1], '\\set id random(1, 1000)', 'a random shipment of the set for each transaction')
  t.equal(lines[2], "SELECT id, status, xmin::text, nextval('h')::int FROM s WHERE id = :id", 'the shipment id is the variable')
  t.equal(lines[3], '\\gset s1_', 'the read whose answer a later statement needs stores it')
  t.equal(lines[4], 'BEGIN;', 'transaction boundaries are kept')
  t.match(lines[5], /SELECT :s1_nextval, :id, 'new', 'in_progress', E'2026-11-26T18\\x3a00\\x3a11\.000Z' FROM s WHERE id = :id AND xmin = :s1_xmin::xid;$/, 'the version and history id read before; a constant stays a literal; colons escaped')
  t.match(lines[6], /^INSERT INTO o .* VALUES \(\(substr\(lpad\(to_hex/, 'a version 7 message id is made anew, time first')
  t.match(lines[6], /\('shipment' \|\| E'\\x3a' \|\| :id\)|\(E'shipment\\x3a' \|\| :id\)/, 'the ordering key holds the shipment id')
  t.match(lines[6], /substr\(md5\(random\(\)::text\) \|\| md5\(random\(\)::text\) \|\| md5\(random\(\)::text\), 1, 32\)/, 'a per-request token is random, of its length')
  t.match(lines[6], /'it''s', 'true', '\{"a","b\\"c"\}'\);$/, 'quotes doubled, arrays as PostgreSQL arrays')
  t.equal(lines[7], 'COMMIT;')
  t.notMatch(script.replace(/::/g, ''), /:(?!id\b|s1_)[A-Za-z0-9_]/, 'no colon before a name but the variables (pgbench would take it for one, inside quotes too)')
})

t.test('captures that sent different statements, or only one capture, are refused', async (t) => {
  const one = change(11, '801', 6, '01a21905-7abd-7e8c-8b68-ed2db95fa239', 'GNg7zjnXMZJZjl1ReWIXtelAeoAqYaBz')
  const other = change(12, '802', 7, '01a21905-7af4-7674-a56c-a9b637e19f4d', 'Q1w2e3r4t5y6u7i8o9p0a1s2d3f4g5h6')
  other.statements.splice(1, 1)
  t.throws(() => pgbenchScript([one, other], { first: 1, last: 10 }), /different statements/)
  t.throws(() => pgbenchScript([one], { first: 1, last: 10 }), /two captures/)
})

t.test('literals are sent as node-postgres sends parameters', async (t) => {
  t.equal(sqlLiteral(null), 'NULL')
  t.equal(sqlLiteral(12), "'12'")
  t.equal(sqlLiteral({ a: 1 }), "E'{\"a\"\\x3a1}'")
  t.equal(sqlLiteral('back\\slash: yes'), "E'back\\\\slash\\x3a yes'")
  t.equal(sqlLiteral(['x', null]), "'{\"x\",NULL}'")
})
