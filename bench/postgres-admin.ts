// The bench scripts' PostgreSQL databases: made empty on the server of BENCH_POSTGRES_URL, dropped after.
import pg from 'pg'

export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/** One statement on the server's maintenance connection (CREATE and DROP DATABASE cannot share a pool). */
export async function adminQuery(text: string) {
  const client = new pg.Client({ connectionString: POSTGRES_URL })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}

/** A new, empty database named `database` (an old one of that name dropped first); its URL. */
export async function emptyPostgresDatabase(database: string): Promise<string> {
  await adminQuery(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
  await adminQuery(`CREATE DATABASE "${database}"`)
  const url = new URL(POSTGRES_URL)
  url.pathname = `/${database}`
  return url.toString()
}
