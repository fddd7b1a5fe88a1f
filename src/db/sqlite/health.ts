// The health report's facts on SQLite: bounded reads (see ../health.ts).
import { sql } from 'drizzle-orm'
import { MIGRATIONS_TABLE, type HealthQueries } from '../health.js'
import type { SqliteContext } from './context.js'

export function createSqliteHealthQueries({ db }: SqliteContext): HealthQueries {
  return {
    async databaseVersion() {
      return `SQLite ${db.get<{ version: string }>(sql`SELECT sqlite_version() AS version`).version}`
    },

    async healthFacts(now, cap) {
      const at = now.getTime()
      const migrations = db.get<{ applied: number; newest: number | null }>(sql`SELECT count(*) AS applied, max(created_at) AS newest FROM ${sql.identifier(MIGRATIONS_TABLE)}`)
      // The partial indexes on pending and failed messages (migrations 0003, 0019) answer these.
      const due = db.get<{ availableAt: number } | undefined>(sql`SELECT available_at AS availableAt FROM shipments_outbox WHERE state = 'pending' AND available_at <= ${at} ORDER BY available_at, id LIMIT 1`)
      const backlog = db.get<{ count: number }>(sql`SELECT count(*) AS count FROM (SELECT 1 FROM shipments_outbox WHERE state = 'pending' AND available_at <= ${at} LIMIT ${cap})`)
      const attention = db.get<{ count: number }>(sql`SELECT count(*) AS count FROM (SELECT 1 FROM shipments_attention_orders LIMIT ${cap})`)
      const dead = db.get<{ count: number }>(sql`SELECT count(*) AS count FROM (SELECT 1 FROM shipments_outbox WHERE state = 'failed' LIMIT ${cap})`)
      const claims = db.all<{ instanceId: string; messages: number }>(
        sql`SELECT claimed_by AS instanceId, count(*) AS messages FROM (SELECT claimed_by FROM shipments_outbox WHERE state = 'pending' AND claimed_until > ${at} AND claimed_by IS NOT NULL LIMIT ${cap}) GROUP BY claimed_by ORDER BY claimed_by`,
      )
      const leases = db.all<{ batchId: number; owner: string }>(
        sql`SELECT id AS batchId, lease_owner AS owner FROM shipments_label_batches WHERE state = 'running' AND lease_owner IS NOT NULL AND lease_expires_at > ${at} ORDER BY id LIMIT 20`,
      )
      return {
        batchLeases: leases,
        migrations: { applied: Number(migrations.applied), newest: migrations.newest === null ? null : Number(migrations.newest) },
        oldestDueAt: due ? new Date(due.availableAt) : null,
        backlog: backlog.count,
        attentionOrders: attention.count,
        deadLetters: dead.count,
        claims,
      }
    },
  }
}
