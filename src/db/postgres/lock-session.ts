// Named locks across instances on PostgreSQL: session advisory locks, all held on one connection the
// data layer opens beside the pool.
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { LockTimeoutError } from '../data-layer.js'

export interface AdvisoryLockSession {
  /** Takes the advisory lock (lockClass, key), trying again until `deadline` (epoch ms); resolves to its release. */
  acquire(lockClass: number, key: number, name: string, deadline: number): Promise<() => Promise<void>>
  close(): Promise<void>
}

/**
 * A named lock guards work that calls out (a label purchase, a push) and writes through the pool.
 * Held on a pool connection, each lock took one of the connections that work needs: ten purchases at
 * once on a pool of ten held all ten and waited for an eleventh until the pool's timeout, and a host's
 * pool of one could never run a locked task at all. One connection of its own holds any number of
 * session locks: each is taken with pg_try_advisory_lock, so the connection never waits on the server,
 * and a lock another instance holds is tried again with backoff until the deadline (waiters in this
 * process queue in front, see the data layer). The server releases the locks if the process dies, and
 * if this connection drops; the next lock opens a new one.
 */
export function createAdvisoryLockSession(pool: pg.Pool): AdvisoryLockSession {
  // The pool's own client class and options: the host's connection settings, password callback included.
  const ClientClass = (pool as unknown as { Client?: typeof pg.Client }).Client ?? pg.Client
  let session: Promise<pg.Client> | null = null
  let closed = false
  // One query at a time on the connection: node-postgres queues overlapping calls itself but deprecates
  // it (pg 9 drops it), and every lock and unlock is one short statement.
  let queue: Promise<unknown> = Promise.resolve()
  const inTurn = <T>(query: () => Promise<T>): Promise<T> => {
    const result = queue.then(query, query)
    queue = result.catch(() => {})
    return result
  }

  function connection(): Promise<pg.Client> {
    if (session) return session
    const client = new ClientClass(pool.options)
    const connecting = client.connect().then(() => client)
    const forget = () => {
      if (session === connecting) session = null
    }
    // A dropped connection rejects the query in flight; the listener keeps the event from crashing the process.
    client.on('error', forget)
    client.on('end', forget)
    connecting.catch(forget)
    session = connecting
    return connecting
  }

  return {
    async acquire(lockClass, key, name, deadline) {
      for (let attempt = 0; ; attempt++) {
        const client = await connection()
        const { rows } = await inTurn(() => client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS locked', [lockClass, key]))
        if (rows[0]!.locked) {
          return async () => {
            // A connection that dropped meanwhile released the lock with it.
            if (session && (await session.catch(() => null)) === client) await inTurn(() => client.query('SELECT pg_advisory_unlock($1, $2)', [lockClass, key])).catch(() => {})
          }
        }
        if (Date.now() >= deadline) throw new LockTimeoutError(name)
        // Back off a little more each time, with jitter so competing instances do not march in step.
        await sleep(Math.min(2 + attempt * 2, 25) * (0.5 + Math.random()))
      }
    },
    async close() {
      if (closed) return
      closed = true
      const open = session
      session = null
      const client = await open?.catch(() => null)
      await client?.end().catch(() => {})
    },
  }
}
