// Turns the statements the package sent for two requests of one kind (captured by sql-capture.ts) into
// a pgbench custom script (`pgbench -f`) that sends the same statements, in the same order, with the
// same transaction boundaries and locks, for a random shipment of the bench's set. Pure: no I/O, so a
// broken conversion fails its unit test (test/pgbench-script.test.ts), not only a bench run.

/** One statement as node-postgres sent it, with the first row it answered (values as the package parsed them). */
export interface CapturedStatement {
  text: string
  values: unknown[]
  /** The prepared statement's name, when the package named it. */
  name: string | null
  fields: string[]
  firstRow: unknown[] | null
  rowCount: number
}

export interface ScriptRequest {
  /** The shipment the request changed: its id becomes pgbench's `:id`. */
  id: number
  statements: CapturedStatement[]
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/**
 * A new UUID per transaction, time first as the version 7 ids the package writes (so the outbox's
 * unique index grows at its end, as it does for the package, not at random pages).
 */
const TIME_ORDERED_UUID =
  "(substr(lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0'), 1, 8) || '-' || substr(lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0'), 9, 4) || '-7' || substr(gen_random_uuid()::text, 16))"
/** A per-request token: 16 letters, digits, `_` or `-` or more, with a digit and a letter (not a word, not a number). */
const TOKEN = /^(?=.*[0-9])(?=.*[A-Za-z])[A-Za-z0-9_-]{16,}$/
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** A SQL literal of a parameter as node-postgres sends it (text): quoted, so its type comes from the statement as a parameter's does. */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL'
  const text = parameterText(value)
  // pgbench takes every `:name` of a command for a variable, inside quotes too (a timestamp's `:01`, a
  // payload's `"key":null`), so a text with a colon is an escape string with the colon as `\x3a`.
  if (!text.includes(':')) return `'${text.replace(/'/g, "''")}'`
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''").replace(/:/g, '\\x3a')}'`
}

/** A parameter's text as node-postgres sends it (its prepareValue): arrays as PostgreSQL arrays, objects as JSON. */
function parameterText(value: unknown): string {
  if (value instanceof Date) return value.toISOString()
  if (Buffer.isBuffer(value)) return `\\x${value.toString('hex')}`
  if (Array.isArray(value)) {
    const element = (each: unknown): string =>
      each === null || each === undefined ? 'NULL' : Array.isArray(each) ? parameterText(each) : `"${parameterText(each).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`
    return `{${value.map(element).join(',')}}`
  }
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}

/** A result value a later parameter may be taken from (pgbench's `\gset` stores it as text). */
const carried = (value: unknown) => (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && value !== '')

/**
 * The script. `requests` are at least two captures of the same kind of request for different
 * shipments: a parameter is
 * - the shipment's id (in every capture): `:id`, or inside a text, `'before' || :id || 'after'`;
 * - a value that differs between captures and that an earlier statement answered (the same column's,
 *   in every capture): that statement ends with `\gset` and the parameter is its variable (a row
 *   version, an id taken from a sequence);
 * - a UUID that differs between captures (a message id, unique per request): a new one per transaction
 *   (time first when the captured one is version 7);
 * - a token that differs between captures (a dedupe key): random characters of the same length;
 * - anything else: the first capture's value as a literal (a timestamp, a payload, a status).
 * Throws when the captures did not send the same statements in the same order.
 */
export function pgbenchScript(requests: ScriptRequest[], shipments: { first: number; last: number }): string {
  if (requests.length < 2) throw new Error('pgbenchScript needs two captures or more, to tell fixed values from per-request ones')
  const [model, ...others] = requests
  if (model.statements.length === 0) throw new Error('the capture holds no statement')
  for (const other of others) {
    const texts = (request: ScriptRequest) => request.statements.map((statement) => statement.text)
    if (JSON.stringify(texts(other)) !== JSON.stringify(texts(model))) {
      throw new Error(`two requests of one kind sent different statements:\n${texts(model).join('\n---\n')}\n=====\n${texts(other).join('\n---\n')}`)
    }
  }
  const gset = new Set<number>()
  const variableOf = (statementIndex: number, field: string) => `s${statementIndex + 1}_${field}`

  /** The replay's expression for parameter `index` of statement `at`. */
  const expression = (at: number, index: number): string => {
    const valuesOf = (request: ScriptRequest) => request.statements[at].values[index]
    const value = valuesOf(model)
    if (value === null || value === undefined) return 'NULL'
    if (requests.every((request) => String(valuesOf(request)) === String(request.id))) return ':id'
    // The latest earlier answer holding this value in every capture; only for a value that differs
    // between captures (a constant answered by chance, a source's name, stays a literal).
    const perRequest = others.some((other) => String(valuesOf(other)) !== String(value))
    for (let earlier = perRequest ? at - 1 : -1; earlier >= 0; earlier--) {
      const answered = model.statements[earlier]
      if (answered.rowCount !== 1 || answered.firstRow === null || !answered.fields.every((field) => VARIABLE_NAME.test(field))) continue
      if (new Set(answered.fields).size !== answered.fields.length) continue
      const column = answered.fields.findIndex((_, column) =>
        requests.every((request) => {
          const row = request.statements[earlier].firstRow
          return row !== null && carried(row[column]) && String(row[column]) === String(valuesOf(request))
        }),
      )
      if (column >= 0) {
        gset.add(earlier)
        return `:${variableOf(earlier, answered.fields[column])}`
      }
    }
    if (typeof value === 'string') {
      if (UUID.test(value) && others.some((other) => valuesOf(other) !== value)) return value[14] === '7' ? TIME_ORDERED_UUID : 'gen_random_uuid()::text'
      // A token that differs between captures (a dedupe key, a hash): a new one of the same length per
      // transaction, or the replay would hit the unique index's conflict and write nothing.
      if (TOKEN.test(value) && requests.every((request) => { const other = valuesOf(request); return typeof other === 'string' && other.length === value.length && TOKEN.test(other) }) && perRequest) {
        return `substr(md5(random()::text) || md5(random()::text) || md5(random()::text), 1, ${value.length})`
      }
      // The id inside a text (an ordering key): the text around it is the same in every capture.
      const around = (request: ScriptRequest) => {
        const text = valuesOf(request)
        if (typeof text !== 'string') return null
        const parts = text.split(new RegExp(`(?<![0-9])${request.id}(?![0-9])`))
        return parts.length === 2 ? parts : null
      }
      // Not in a JSON document: an expression is text, which a json column takes only through a cast.
      const parts = /^\s*[[{]/.test(value) ? null : around(model)
      if (parts && requests.every((request) => JSON.stringify(around(request)) === JSON.stringify(parts))) {
        return `(${[parts[0] ? sqlLiteral(parts[0]) : null, ':id', parts[1] ? sqlLiteral(parts[1]) : null].filter(Boolean).join(' || ')})`
      }
    }
    return sqlLiteral(value)
  }

  const bodies = model.statements.map((statement, at) =>
    // $10 before $1: one pass over the text, each placeholder replaced by its own parameter's expression.
    statement.text.trim().replace(/\$(\d+)/g, (placeholder, number: string) => {
      const index = Number(number) - 1
      if (index >= statement.values.length) throw new Error(`${placeholder} has no value in: ${statement.text}`)
      return expression(at, index)
    }),
  )
  const lines = [
    `-- Generated by bench/pgbench-script.ts from the statements the package sent (${requests.length} captures); do not edit.`,
    `\\set id random(${shipments.first}, ${shipments.last})`,
  ]
  for (const [at, body] of bodies.entries()) {
    const text = body.replace(/;\s*$/, '')
    // pgbench ends a command at `;` or a `\gset` in its place; `\gset` needs the answer of exactly one row.
    lines.push(gset.has(at) ? `${text}\n\\gset s${at + 1}_` : `${text};`)
  }
  return lines.join('\n') + '\n'
}
