// The health report's facts on PostgreSQL: bounded reads, sent together (see ../health.ts).
import { sql } from 'drizzle-orm'
import { MIGRATIONS_TABLE, type HealthQueries } from '../health.js'
import type { PostgresContext } from './context.js'

export function createPostgresHealthQueries({ db }: PostgresContext): HealthQueries {
  return {
    async databaseVersion() {
      const { rows } = await db.execute<{ server_version: string }>(sql`SHOW server_version`)
      return `PostgreSQL ${rows[0]?.server_version ?? 'unknown'}`
    },

    async healthFacts(now, cap) {
      const [migrations, due, backlog, attention, dead, claims, leases] = await Promise.all([
        db.execute<{ applied: string; newest: string | null }>(sql`SELECT count(*) AS applied, max(created_at) AS newest FROM ${sql.identifier(MIGRATIONS_TABLE)}`),
        // The partial indexes on pending and failed messages (migrations 0004, 0020) answer these.
        db.execute<{ available_at: Date }>(sql`SELECT available_at FROM shipments_outbox WHERE state = 'pending' AND available_at <= ${now} ORDER BY available_at, id LIMIT 1`),
        db.execute<{ count: string }>(sql`SELECT count(*) AS count FROM (SELECT 1 FROM shipments_outbox WHERE state = 'pending' AND available_at <= ${now} LIMIT ${cap}) AS due`),
        db.execute<{ count: string }>(sql`SELECT count(*) AS count FROM (SELECT 1 FROM shipments_attention_orders LIMIT ${cap}) AS attention`),
        db.execute<{ count: string }>(sql`SELECT count(*) AS count FROM (SELECT 1 FROM shipments_outbox WHERE state = 'failed' LIMIT ${cap}) AS failed`),
        db.execute<{ instance_id: string; messages: string }>(
          sql`SELECT claimed_by AS instance_id, count(*) AS messages FROM (SELECT claimed_by FROM shipments_outbox WHERE state = 'pending' AND claimed_until > ${now} AND claimed_by IS NOT NULL LIMIT ${cap}) AS claimed GROUP BY claimed_by ORDER BY claimed_by`,
        ),
        // The batches' state index answers it (migration 0018).
        db.execute<{ id: number; lease_owner: string }>(
          sql`SELECT id, lease_owner FROM shipments_label_batches WHERE state = 'running' AND lease_owner IS NOT NULL AND lease_expires_at > ${now} ORDER BY id LIMIT 20`,
        ),
      ])
      const newest = migrations.rows[0]?.newest ?? null
      const dueAt = due.rows[0]?.available_at
      return {
        migrations: { applied: Number(migrations.rows[0]?.applied ?? 0), newest: newest === null ? null : Number(newest) },
        oldestDueAt: dueAt === undefined ? null : new Date(dueAt),
        backlog: Number(backlog.rows[0]?.count ?? 0),
        attentionOrders: Number(attention.rows[0]?.count ?? 0),
        deadLetters: Number(dead.rows[0]?.count ?? 0),
        batchLeases: leases.rows.map((row) => ({ batchId: Number(row.id), owner: row.lease_owner })),
        claims: claims.rows.map((row) => ({ instanceId: row.instance_id, messages: Number(row.messages) })),
      }
    },
  }
}
