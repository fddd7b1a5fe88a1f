// Crossing borders on SQLite: declarations and ship-to checks are one row each, written whole in the
// group commit (every writer of the file is serialized, so an upsert needs no lock of its own).
import { eq, inArray } from 'drizzle-orm'
import type { AddressCheckRow, CustomsDeclarationRow, CustomsStore } from '../customs.js'
import type { SqliteContext } from './context.js'
import { addressChecks, customsDeclarations } from './customs-schema.js'

export function createSqliteCustomsStore({ db, group }: SqliteContext): CustomsStore {
  const declaration = (parcelId: number) => db.select().from(customsDeclarations).where(eq(customsDeclarations.parcelId, parcelId)).get() as CustomsDeclarationRow | undefined
  const check = (shipmentId: number) => db.select().from(addressChecks).where(eq(addressChecks.shipmentId, shipmentId)).get() as AddressCheckRow | undefined

  return {
    async declaration(parcelId) {
      return declaration(parcelId)
    },
    async declarationsOf(shipmentId) {
      return db.select().from(customsDeclarations).where(eq(customsDeclarations.shipmentId, shipmentId)).orderBy(customsDeclarations.parcelId).all() as CustomsDeclarationRow[]
    },
    async declarationsFor(parcelIds) {
      if (parcelIds.length === 0) return []
      return db.select().from(customsDeclarations).where(inArray(customsDeclarations.parcelId, [...parcelIds])).all() as CustomsDeclarationRow[]
    },
    async saveDeclaration(row) {
      return group.run(() => {
        const now = new Date()
        const { parcelId, forms, ...values } = row
        return db
          .insert(customsDeclarations)
          .values({ parcelId, ...values, forms: forms ?? [], createdAt: now, updatedAt: now })
          .onConflictDoUpdate({ target: customsDeclarations.parcelId, set: { ...values, ...(forms ? { forms } : {}), updatedAt: now } })
          .returning()
          .get() as CustomsDeclarationRow
      })
    },
    async saveForms(parcelId, forms) {
      await group.run(() => {
        db.update(customsDeclarations).set({ forms, updatedAt: new Date() }).where(eq(customsDeclarations.parcelId, parcelId)).run()
      })
    },
    async deleteDeclaration(parcelId) {
      await group.run(() => {
        db.delete(customsDeclarations).where(eq(customsDeclarations.parcelId, parcelId)).run()
      })
    },
    async addressCheck(shipmentId) {
      return check(shipmentId)
    },
    async addressChecksFor(shipmentIds) {
      if (shipmentIds.length === 0) return []
      return db.select().from(addressChecks).where(inArray(addressChecks.shipmentId, [...shipmentIds])).all() as AddressCheckRow[]
    },
    async saveAddressCheck(shipmentId, change) {
      return group.run(() => {
        const now = new Date()
        return db
          .insert(addressChecks)
          .values({ shipmentId, ...change, updatedAt: now })
          .onConflictDoUpdate({ target: addressChecks.shipmentId, set: { ...change, updatedAt: now } })
          .returning()
          .get() as AddressCheckRow
      })
    },
  }
}
