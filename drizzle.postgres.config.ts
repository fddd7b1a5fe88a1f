// drizzle-kit configuration for PostgreSQL: generates the committed migrations under drizzle/postgres/.
import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/postgres/schema.ts',
  out: './drizzle/postgres',
})
