// Customs: the shop's settings (one setting, replaced whole, the plugin's options until saved) and each
// international parcel's declaration: built from its items, the order lines' customs data and the settings;
// edited whole and kept; reset to the built one; and the gate rates and purchases pass through (an
// incomplete declaration refused in words before any provider call, a complete one sent with the request).
import type { DataLayer } from '../db/data-layer.js'
import type { CustomsDeclarationRow, NewCustomsDeclaration } from '../db/customs.js'
import type { ParcelItem, ParcelRow } from '../db/parcels.js'
import type { CustomsGate, LabelPort } from '../deliveries/service.js'
import { CustomsErrors, CustomsIncompleteError, DeliveryErrors, ShipmentsErrors, ShipmentValidationError } from '../errors.js'
import type { WeightUnit } from '../model/units.js'
import type { OrderLine, OrderStore, PostalAddress } from '../order-store.js'
import type { ShipmentService } from '../shipments/service.js'
import { formatIsoWithOffset } from '../time.js'
import { checkedDeclarationInput, checkedSettings, type DeclarationInput } from './checks.js'
import {
  buildDeclaration,
  crossesBorder,
  declarationProblems,
  isStale,
  itemsOfParcel,
  pickSettings,
  SETTING_FIELDS,
  toCustomsInfo,
  totalsOf,
  type CustomsDeclaration,
  type CustomsSettings,
  type ParcelCustoms,
  type SavedCustomsSettings,
} from './model.js'
import type { ResolvedCustomsOptions } from './options.js'

export const CUSTOMS_SETTINGS_STATE_KEY = 'customs.settings'

export interface CustomsServiceDependencies {
  data: DataLayer
  shipments: Pick<ShipmentService, 'get'>
  orderStore: Pick<OrderStore, 'orderLines'>
  /** The label port's addresses: where the parcel ships from and to decides whether it crosses a border. */
  labels: Pick<LabelPort, 'addresses'>
  /** True for the package's reference store, whose lines' weights are read from its own columns. */
  referenceStore: boolean
  /** The settings until a store admin saves them. */
  defaults: ResolvedCustomsOptions
  clock: () => number
  timeZone: string
}

/** A parcel with what its declaration is made of: its shipment, the order's lines, the items it holds. */
interface ParcelView {
  shipment: { id: number; orderId: number; items: readonly ParcelItem[] }
  parcel: ParcelRow
  lines: Map<number, OrderLine>
  held: ParcelItem[]
}

interface ParcelScene extends ParcelView {
  from: PostalAddress
  to: PostalAddress
}

export function createCustomsService(deps: CustomsServiceDependencies) {
  const { data } = deps
  const present = (date: Date) => formatIsoWithOffset(date.getTime(), deps.timeZone)

  /** The settings as saved, else the plugin's options. */
  async function settings(): Promise<SavedCustomsSettings> {
    const stored = await data.packageState(CUSTOMS_SETTINGS_STATE_KEY)
    if (!stored) return { ...pickSettings(deps.defaults), savedAt: null, savedBy: null }
    const saved = JSON.parse(stored) as Partial<SavedCustomsSettings>
    return { ...pickSettings({ ...deps.defaults, ...saved }), savedAt: saved.savedAt ?? null, savedBy: saved.savedBy ?? null }
  }

  /** Replaces the settings whole, once every field is checked (a refusal, 422 by field, writes nothing). */
  async function replaceSettings(input: unknown, context: { userId?: string | null | undefined } = {}): Promise<SavedCustomsSettings> {
    const checked = checkedSettings(input)
    const record: SavedCustomsSettings = { ...checked, savedAt: present(new Date(deps.clock())), savedBy: context.userId ?? null }
    await data.setPackageState(CUSTOMS_SETTINGS_STATE_KEY, JSON.stringify(record))
    return record
  }

  /** The order's lines by id, with their unit weights (the reference store keeps them in its own columns). */
  async function linesOf(orderId: number): Promise<Map<number, OrderLine>> {
    const lines = (await deps.orderStore.orderLines?.(orderId)) ?? []
    const measures = deps.referenceStore ? new Map((await data.parcels.orderLineMeasures(orderId)).map((row) => [row.id, row])) : new Map()
    return new Map(
      lines.map((line) => {
        const row = measures.get(line.id)
        const weight = row && row.weight !== null && row.weightUnit !== null ? { value: String(row.weight), unit: row.weightUnit as WeightUnit } : line.weight
        return [line.id, { ...line, weight }]
      }),
    )
  }

  async function scene(shipmentId: number, parcelId: number): Promise<ParcelScene> {
    const shipment = await deps.shipments.get(shipmentId)
    if (!shipment) throw new ShipmentsErrors.ShipmentNotFound(shipmentId)
    const parcel = await data.parcels.find(parcelId)
    if (!parcel || parcel.shipmentId !== shipmentId) throw new DeliveryErrors.ParcelNotFound(parcelId)
    // The label port's addresses: the shipment's ship-to as the deliveries see it.
    const [{ from, to }, view] = await Promise.all([deps.labels.addresses(shipment), viewOf(shipment, parcel)])
    return { ...view, from, to }
  }

  async function viewOf(shipment: ParcelView['shipment'], parcel: ParcelRow): Promise<ParcelView> {
    const lines = await linesOf(shipment.orderId)
    return { shipment, parcel, lines, held: itemsOfParcel(parcel, shipment.items, lines) }
  }

  /** The built declaration of the parcel now. */
  async function built({ parcel, lines, held }: ParcelView): Promise<NewCustomsDeclaration> {
    return buildDeclaration({ parcel, items: held, lines, settings: await settings() })
  }

  /**
   * The declaration that holds for the parcel: the one its label was bought with; else an edit, kept; else
   * the one built now (a built one follows the parcel's items and the lines as they change).
   */
  async function current(view: ParcelView): Promise<{ declaration: NewCustomsDeclaration; stored: CustomsDeclarationRow | undefined }> {
    const stored = await data.customs.declaration(view.parcel.id)
    if (stored && (stored.edited || view.parcel.labelOperationId !== null)) return { declaration: stored, stored }
    return { declaration: await built(view), stored }
  }

  function presented(declaration: NewCustomsDeclaration, stored: CustomsDeclarationRow | undefined, { shipment, parcel, held: parcelItems }: ParcelView): CustomsDeclaration {
    return {
      parcelId: parcel.id,
      shipmentId: shipment.id,
      ...pickSettings(declaration as CustomsSettings),
      items: declaration.items,
      edited: declaration.edited,
      stale: declaration.edited && isStale(declaration.items, parcelItems),
      stored: stored !== undefined && sameDeclaration(declaration, stored),
      forms: stored?.forms ?? [],
      totals: totalsOf(declaration.items, parcel.weightUnit as WeightUnit),
      problems: declarationProblems(declaration, parcel, parcelItems),
    }
  }

  async function answer(view: ParcelScene): Promise<ParcelCustoms> {
    const base = { parcelId: view.parcel.id, fromCountry: view.from.country, toCountry: view.to.country }
    if (!crossesBorder(view.from.country, view.to.country)) return { ...base, required: false, declaration: null }
    const { declaration, stored } = await current(view)
    return { ...base, required: true, declaration: presented(declaration, stored, view) }
  }

  /** The parcel's customs: `required: false` for a parcel that stays in one country; else its declaration (built when none is stored; nothing is written). */
  async function parcelCustoms(shipmentId: number, parcelId: number): Promise<ParcelCustoms> {
    return answer(await scene(shipmentId, parcelId))
  }

  async function requireInternational(shipmentId: number, parcelId: number): Promise<ParcelScene> {
    const view = await scene(shipmentId, parcelId)
    if (!crossesBorder(view.from.country, view.to.country)) throw new CustomsErrors.NotRequired(parcelId)
    if (view.parcel.labelOperationId !== null) throw new DeliveryErrors.ParcelLocked(parcelId)
    return view
  }

  /** Replaces the parcel's declaration with an edit, checked whole first (422 by field, nothing written); kept until reset. */
  async function saveDeclaration(shipmentId: number, parcelId: number, input: DeclarationInput): Promise<ParcelCustoms> {
    const view = await requireInternational(shipmentId, parcelId)
    const checked = checkedDeclarationInput(input)
    const declaration: NewCustomsDeclaration = { parcelId, shipmentId, ...checked, edited: true }
    const problems = declarationProblems(declaration, view.parcel, view.held)
    if (Object.keys(problems).length > 0) throw new ShipmentValidationError(problems)
    await data.customs.saveDeclaration(declaration)
    return answer(view)
  }

  /** Drops an edit: the parcel's declaration is the built one again. */
  async function resetDeclaration(shipmentId: number, parcelId: number): Promise<ParcelCustoms> {
    const view = await requireInternational(shipmentId, parcelId)
    await data.customs.deleteDeclaration(parcelId)
    return answer(view)
  }

  /** The deliveries' gate (see CustomsGate): the complete declaration to send, or a refusal naming each field. */
  const declarationFor: CustomsGate['declarationFor'] = async (request) => {
    if (!crossesBorder(request.from.country, request.to.country)) return undefined
    const view = await viewOf(request.shipment, request.parcel)
    const { declaration, stored } = await current(view)
    const problems = declarationProblems(declaration, request.parcel, view.held)
    if (Object.keys(problems).length > 0) throw new CustomsIncompleteError(request.parcel.id, problems)
    // The label is bought with a stored declaration: the provider's forms are kept with it.
    if (request.keep && !(stored && sameDeclaration(declaration, stored))) await data.customs.saveDeclaration(declaration)
    return toCustomsInfo(declaration)
  }

  return { settings, replaceSettings, parcelCustoms, saveDeclaration, resetDeclaration, declarationFor }
}

/** Whether two declarations say the same (settings, items, edited), whatever their times and forms. */
function sameDeclaration(a: NewCustomsDeclaration, b: NewCustomsDeclaration): boolean {
  // Items in a fixed order of fields: PostgreSQL's jsonb gives them back in its own.
  const said = (each: NewCustomsDeclaration) =>
    JSON.stringify([
      SETTING_FIELDS.map((field) => each[field]),
      each.items.map((item) => [item.lineItemId, item.description, item.quantity, item.value, item.weight.value, item.weight.unit, item.tariffNumber, item.originCountry, item.sku]),
      each.edited,
    ])
  return said(a) === said(b)
}

/** The customs service as hosts and routes see it (`app.shipments.customs`): without the deliveries' gate. */
export type CustomsService = Omit<ReturnType<typeof createCustomsService>, 'declarationFor'>
