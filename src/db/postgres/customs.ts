// Crossing borders on PostgreSQL: declarations and ship-to checks are one row each, written whole by one
// upsert (INSERT ... ON CONFLICT DO UPDATE is atomic, so two instances saving at once leave one whole row).
import { eq, inArray } from 'drizzle-orm'
import type { AddressCheckRow, CustomsDeclarationRow, CustomsStore } from '../customs.js'
import { isInt4, type PostgresContext } from './context.js'
import { addressChecks, customsDeclarations } from './customs-schema.js'

export function createPostgresCustomsStore({ db, wrote }: PostgresContext): CustomsStore {
  const int4s = (ids: readonly number[]) => ids.filter(isInt4)
  return {
    async declaration(parcelId) {
      if (!isInt4(parcelId)) return undefined
      const [row] = await db.select().from(customsDeclarations).where(eq(customsDeclarations.parcelId, parcelId))
      return row as CustomsDeclarationRow | undefined
    },
    async declarationsOf(shipmentId) {
      if (!isInt4(shipmentId)) return []
      return (await db.select().from(customsDeclarations).where(eq(customsDeclarations.shipmentId, shipmentId)).orderBy(customsDeclarations.parcelId)) as CustomsDeclarationRow[]
    },
    async declarationsFor(parcelIds) {
      const ids = int4s(parcelIds)
      if (ids.length === 0) return []
      return (await db.select().from(customsDeclarations).where(inArray(customsDeclarations.parcelId, ids))) as CustomsDeclarationRow[]
    },
    async saveDeclaration(row) {
      const now = new Date()
      const { parcelId, forms, ...values } = row
      const [saved] = await db
        .insert(customsDeclarations)
        .values({ parcelId, ...values, forms: forms ?? [], createdAt: now, updatedAt: now })
        .onConflictDoUpdate({ target: customsDeclarations.parcelId, set: { ...values, ...(forms ? { forms } : {}), updatedAt: now } })
        .returning()
      return wrote(saved as CustomsDeclarationRow)
    },
    async saveForms(parcelId, forms) {
      if (!isInt4(parcelId)) return
      wrote(await db.update(customsDeclarations).set({ forms, updatedAt: new Date() }).where(eq(customsDeclarations.parcelId, parcelId)))
    },
    async deleteDeclaration(parcelId) {
      if (!isInt4(parcelId)) return
      wrote(await db.delete(customsDeclarations).where(eq(customsDeclarations.parcelId, parcelId)))
    },
    async addressCheck(shipmentId) {
      if (!isInt4(shipmentId)) return undefined
      const [row] = await db.select().from(addressChecks).where(eq(addressChecks.shipmentId, shipmentId))
      return row as AddressCheckRow | undefined
    },
    async addressChecksFor(shipmentIds) {
      const ids = int4s(shipmentIds)
      if (ids.length === 0) return []
      return (await db.select().from(addressChecks).where(inArray(addressChecks.shipmentId, ids))) as AddressCheckRow[]
    },
    async saveAddressCheck(shipmentId, change) {
      const now = new Date()
      const [row] = await db
        .insert(addressChecks)
        .values({ shipmentId, ...change, updatedAt: now })
        .onConflictDoUpdate({ target: addressChecks.shipmentId, set: { ...change, updatedAt: now } })
        .returning()
      return wrote(row as AddressCheckRow)
    },
  }
}
