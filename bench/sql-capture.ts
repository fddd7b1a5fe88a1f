// Captures the statements the package sends to PostgreSQL while a function runs: node-postgres'
// Client.prototype.query wrapped in this (the bench) process, which the package's pool shares, so
// nothing in the package changes for it. Only calls made in the async context of a request the bench
// marked are kept (AsyncLocalStorage, entered by an onRequest hook: `inject` does not carry its
// caller's context), and only until its answer is sent, so the outbox sweep and deliveries are left out.
import { AsyncLocalStorage } from 'node:async_hooks'
import type { FastifyInstance, InjectOptions } from 'fastify'
import pg from 'pg'
import type { CapturedStatement } from './pgbench-script.js'

interface Capture {
  statements: CapturedStatement[]
  open: boolean
}
const storage = new AsyncLocalStorage<Capture | undefined>()
const captures = new Map<string, Capture>()
let installed = false

type QueryConfig = { text?: string; name?: string; values?: unknown[]; submit?: unknown }
type QueryResultLike = { fields?: Array<{ name: string }>; rows?: unknown[]; rowCount?: number | null }

function install() {
  if (installed) return
  installed = true
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const capture = storage.getStore()
    const [first, second] = args
    const config: QueryConfig = typeof first === 'string' ? { text: first } : ((first ?? {}) as QueryConfig)
    // A Submittable (a cursor, a stream) has no text to replay here; nothing the bench measures sends one.
    if (!capture?.open || typeof config.text !== 'string' || typeof config.submit === 'function') return original.apply(this, args)
    const values = Array.isArray(second) ? second : (config.values ?? [])
    const entry: CapturedStatement = { text: config.text, values: [...values], name: config.name ?? null, fields: [], firstRow: null, rowCount: 0 }
    capture.statements.push(entry)
    const record = (result: QueryResultLike | undefined) => {
      if (!result || Array.isArray(result)) return
      entry.fields = (result.fields ?? []).map((field) => field.name)
      const row = result.rows?.[0]
      entry.firstRow = row === undefined ? null : Array.isArray(row) ? [...row] : entry.fields.map((name) => (row as Record<string, unknown>)[name])
      entry.rowCount = result.rowCount ?? result.rows?.length ?? 0
    }
    const callbackAt = args.findIndex((arg) => typeof arg === 'function')
    if (callbackAt >= 0) {
      const callback = args[callbackAt] as (error: unknown, result: unknown) => void
      args[callbackAt] = (error: unknown, result: QueryResultLike) => {
        if (!error) record(result)
        callback(error, result)
      }
      return original.apply(this, args)
    }
    const returned = original.apply(this, args) as Promise<QueryResultLike> | undefined
    returned?.then?.(record, () => {})
    return returned
  } as typeof pg.Client.prototype.query
}

const HEADER = 'x-bench-capture'

/** Adds the hook that marks captured requests; before the plugin, so its routes inherit it. */
export function addCaptureHook(app: FastifyInstance) {
  install()
  app.addHook('onRequest', (request, _reply, done) => {
    const key = request.headers[HEADER]
    // Entered for every request, so a request after a captured one does not inherit its store.
    storage.enterWith(typeof key === 'string' ? captures.get(key) : undefined)
    done()
  })
  app.addHook('onResponse', (request, _reply, done) => {
    const key = request.headers[HEADER]
    const capture = typeof key === 'string' ? captures.get(key) : undefined
    if (capture) capture.open = false
    done()
  })
}

let captureCount = 0
/** Sends one request through `app.inject` and returns its answer with the statements it sent, in order. */
export async function captureRequest(app: FastifyInstance, options: InjectOptions) {
  const key = `capture-${++captureCount}`
  const capture: Capture = { statements: [], open: true }
  captures.set(key, capture)
  try {
    const response = await app.inject({ ...options, headers: { ...options.headers, [HEADER]: key } })
    return { response, statements: capture.statements }
  } finally {
    capture.open = false
    captures.delete(key)
  }
}
