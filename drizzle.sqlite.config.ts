// drizzle-kit configuration for SQLite: generates the committed migrations under drizzle/sqlite/.
import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'sqlite',
  // The named locks' table is SQLite's own, outside the schema the package exports.
  schema: ['./src/db/sqlite/schema.ts', './src/db/sqlite/named-locks-schema.ts'],
  out: './drizzle/sqlite',
})
