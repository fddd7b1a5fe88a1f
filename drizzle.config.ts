// drizzle-kit configuration: generates the committed SQL migrations under drizzle/ from the schema.
import { defineConfig } from 'drizzle-kit'

export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/sqlite/schema.ts',
  out: './drizzle',
})
