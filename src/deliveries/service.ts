// Deliveries: a shipment's parcels, rate quotes, and labels bought exactly once through a provider's
// delivery methods (intent committed first, reconciled by the provider's own id, never bought twice).
import type { ShipFromSetting } from './ship-from.js'
import { createHash, randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { LockTimeoutError, type DataLayer, type IntegrationRow, type NewOutboxMessage, type OutboxRow, type ParcelPlan } from '../db/data-layer.js'
import type { LabelAttemptRow, LabelOperationRow, ParcelRow, RateQuoteRow } from '../db/parcels.js'
import { DeliveryErrors, ShipmentsErrors, ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import type { DeliveryJournal, LabelFormat, LabelPurchaseRequest, ParcelMeasures, PurchasedLabel } from '../gateway/delivery-provider.js'
import { DeliveryProviderError, LABEL_FORMATS, providerFailureMessage, unknownOutcomeReason } from '../gateway/delivery-provider.js'
import type { IntegrationService } from '../gateway/integrations.js'
import type { AnyProviderDefinition, ProviderContext, ProviderRegistry } from '../gateway/providers.js'
import type { OrderStore, PostalAddress } from '../orders/order-store.js'
import type { OutboxDispatcher } from '../outbox/dispatcher.js'
import type { ShipmentService } from '../shipments/service.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import { formatIsoWithOffset } from '../time.js'
import { MAX_PARCELS_PER_SHIPMENT, parcelColumns, toParcel, type Parcel } from './parcel.js'
import { checkOffers } from './rate-offers.js'
import { toInches, toOunces, type DimensionUnit, type WeightUnit } from './units.js'


export interface DeliveryContext {
  userId?: string | null | undefined
}

export interface BuyLabelInput {
  /** The handle of the integration whose provider buys the label. */
  integration: string
  /** A stored quote (`quoteRates`): refused when it expired or the parcel or addresses changed since. */
  quoteId?: number | undefined
  /** Without a quote: the carrier and service to buy. */
  carrier?: string | undefined
  service?: string | undefined
  labelFormat?: LabelFormat | undefined
}

export interface RateQuote {
  id: number
  parcelId: number
  integration: string
  carrier: string
  service: string
  amount: string
  currency: string
  deliveryDays: number | null
  deliveryDate: string | null
  expiresAt: string
}

/** A label operation with its attempt log, for audits and the admin page. */
export interface LabelOperation {
  operationId: string
  parcelId: number
  state: LabelOperationRow['state']
  carrier: string
  service: string
  externalId: string | null
  error: string | null
  userId: string | null
  dateCreated: string
  attempts: Array<Omit<LabelAttemptRow, 'id' | 'operationId' | 'createdAt'> & { dateCreated: string }>
}

export interface LabelPurchaseResult {
  parcel: Parcel
  operationId: string
  /** True when the label was found at the provider after an earlier attempt's outcome was unknown. */
  recovered: boolean
}

export interface DeliveryServiceDependencies {
  data: DataLayer
  registry: ProviderRegistry
  integrations: IntegrationService
  shipments: ShipmentService
  orderStore: OrderStore
  dispatcher: Pick<OutboxDispatcher, 'claim' | 'deliver'>
  logger: FastifyBaseLogger
  timeZone: string
  clock: () => number
  lockTimeoutMs: number
  /** Where parcels ship from (the setting, else the option); rates and labels are refused without it. */
  shipFrom: ShipFromSetting
  /** How long a rate quote stays valid. */
  quoteLifetimeMs: number
}

/** An integration that sells labels, its provider and a context to call it with. */
export interface DeliveryProviderAt {
  row: IntegrationRow
  provider: AnyProviderDefinition & { deliveries: NonNullable<AnyProviderDefinition['deliveries']> }
  context: ProviderContext
}

/** The deliveries service as hosts see it (`app.shipments.deliveries`): without the returns' port. */
export type DeliveryService = Omit<ReturnType<typeof createDeliveryService>, 'labelPort'>
/** What the returns service borrows to buy a return label: the provider, the journal, the addresses, the measures. */
export type LabelPort = ReturnType<typeof createDeliveryService>['labelPort']

const parcelKey = (shipmentId: number) => `shipment:${shipmentId}`
/** Keys of what a provider is sent or answers that are never written to the attempt log. */
const SECRET_KEY = /key|secret|password|authorization|token|credential/i

/** A copy of `value` with secret-looking keys masked, bounded in depth and size. */
function redacted(value: unknown, depth = 0): unknown {
  if (depth > 6) return '[deep]'
  if (Array.isArray(value)) return value.slice(0, 50).map((each) => redacted(each, depth + 1))
  if (typeof value === 'string') return value.length > 2000 ? `${value.slice(0, 2000)}…` : value
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).map(([key, each]) => [key, SECRET_KEY.test(key) ? '********' : redacted(each, depth + 1)]))
}

export function createDeliveryService(deps: DeliveryServiceDependencies) {
  const { data, registry, integrations, dispatcher, timeZone } = deps
  const present = (row: ParcelRow) => toParcel(row, timeZone)
  const userOf = (context: DeliveryContext) => context.userId ?? null

  async function requireShipment(shipmentId: number) {
    const shipment = await deps.shipments.get(shipmentId)
    if (!shipment) throw new ShipmentsErrors.ShipmentNotFound(shipmentId)
    return shipment
  }

  async function requireParcel(shipmentId: number, parcelId: number): Promise<ParcelRow> {
    const parcel = await data.parcels.find(parcelId)
    if (!parcel || parcel.shipmentId !== shipmentId) {
      await requireShipment(shipmentId)
      throw new DeliveryErrors.ParcelNotFound(parcelId)
    }
    return parcel
  }

  /** The event of a parcel change, written with it. */
  const parcelEvent =
    (name: string, userId: string | null, extra: Record<string, unknown> = {}) =>
    (row: ParcelRow, rows: ParcelRow[]): NewOutboxMessage[] => [
      {
        kind: 'event',
        name,
        orderingKey: parcelKey(row.shipmentId),
        payload: { shipmentId: row.shipmentId, parcel: present(row), parcels: rows.map(present), userId, ...extra },
      },
    ]

  async function committed(outcome: { row: ParcelRow; messages: OutboxRow[] } | undefined, notFound: () => Error): Promise<Parcel> {
    if (!outcome) throw notFound()
    await dispatcher.deliver(outcome.messages)
    return present(outcome.row)
  }

  /** What a shipment holds, by order line: its own lines, or for an order-level shipment every shippable line in full; null when the store cannot tell. */
  async function heldQuantities(shipment: { orderId: number; items: ReadonlyArray<{ lineItemId: number; quantity: number }> }): Promise<Map<number, number> | null> {
    if (shipment.items.length > 0) return new Map(shipment.items.map((item) => [item.lineItemId, item.quantity]))
    const lines = await deps.orderStore.orderLines?.(shipment.orderId)
    if (!lines) return null
    return new Map(lines.filter((line) => line.shippable).map((line) => [line.id, line.quantity]))
  }

  /** Refuses items the shipment does not hold, or more units of a line than it holds. */
  async function checkItems(shipmentId: number, items: ParcelRow['items'] | undefined): Promise<void> {
    if (!items || items.length === 0) return
    const held = await heldQuantities(await requireShipment(shipmentId))
    // A host store without orderLines cannot say what an order-level shipment holds.
    if (!held) return
    const errors: Record<string, string[]> = {}
    items.forEach((item, index) => {
      const quantity = held.get(item.lineItemId)
      if (quantity === undefined) errors[`items.${index}`] = [`line ${item.lineItemId} is not on this shipment`]
      else if (item.quantity > quantity) errors[`items.${index}`] = [`line ${item.lineItemId}: ${item.quantity} in the parcel, ${quantity} on the shipment`]
    })
    if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
  }

  async function checkBox(boxId: number | null | undefined): Promise<void> {
    if (boxId !== undefined && boxId !== null && !(await data.parcels.findBox(boxId))) throw new ShipmentValidationError({ boxId: [`box ${boxId} does not exist`] })
  }

  /** Runs `task` holding the parcel's purchase lock: purchases, voids and parcel changes take turns, across instances. */
  async function withParcelLock<T>(parcelId: number, task: () => Promise<T>): Promise<T> {
    try {
      return await data.withNamedLock('labelPurchase', parcelId, deps.lockTimeoutMs, task)
    } catch (error) {
      // Another purchase of the parcel held the lock all along (a slow carrier): the caller may try again.
      if (error instanceof LockTimeoutError && error.lockName === `labelPurchase:${parcelId}`) throw new DeliveryErrors.PurchaseBusy(parcelId)
      throw error
    }
  }

  async function listParcels(shipmentId: number): Promise<Parcel[]> {
    await requireShipment(shipmentId)
    return (await data.parcels.list(shipmentId)).map(present)
  }

  async function addParcel(shipmentId: number, input: unknown, context: DeliveryContext = {}): Promise<Parcel> {
    const columns = parcelColumns(input, true)
    await requireShipment(shipmentId)
    await checkItems(shipmentId, columns.items)
    await checkBox(columns.boxId)
    // Counted under the shipment's lock, in the transaction that inserts: concurrent adds take turns.
    const outcome = await data.parcels.change({ shipmentId }, (_current, parcelCount) => {
      if (parcelCount >= MAX_PARCELS_PER_SHIPMENT) throw new ShipmentUpdateRejectedError(`A shipment may have at most ${MAX_PARCELS_PER_SHIPMENT} parcels.`)
      return {
        insert: {
          weight: columns.weight!,
          weightUnit: columns.weightUnit!,
          length: columns.length ?? null,
          width: columns.width ?? null,
          height: columns.height ?? null,
          dimensionUnit: columns.dimensionUnit ?? null,
          boxId: columns.boxId ?? null,
          items: columns.items ?? [],
        },
        history: { action: 'added', message: null, userId: userOf(context) },
        messages: parcelEvent('parcelAdded', userOf(context)),
        claimFor: dispatcher.claim,
      }
    })
    return committed(outcome, () => new ShipmentsErrors.ShipmentNotFound(shipmentId))
  }

  /** A parcel with a label (or a purchase under way) keeps its size: the label was bought for it. */
  async function requireUnlabelled(parcel: ParcelRow): Promise<void> {
    if (parcel.labelOperationId !== null || (await data.parcels.activeOperation(parcel.id))) throw new DeliveryErrors.ParcelLocked(parcel.id)
  }

  async function updateParcel(shipmentId: number, parcelId: number, input: unknown, context: DeliveryContext = {}): Promise<Parcel> {
    await requireParcel(shipmentId, parcelId)
    const columns = parcelColumns(input, false)
    await checkItems(shipmentId, columns.items)
    await checkBox(columns.boxId)
    return withParcelLock(parcelId, async () => {
      await requireUnlabelled(await requireParcel(shipmentId, parcelId))
      const outcome = await data.parcels.change({ parcelId }, () => ({
        columns,
        history: { action: 'changed', message: null, userId: userOf(context) },
        messages: parcelEvent('parcelChanged', userOf(context)),
        claimFor: dispatcher.claim,
      }))
      return committed(outcome, () => new DeliveryErrors.ParcelNotFound(parcelId))
    })
  }

  async function removeParcel(shipmentId: number, parcelId: number, context: DeliveryContext = {}): Promise<Parcel> {
    await requireParcel(shipmentId, parcelId)
    return withParcelLock(parcelId, async () => {
      await requireUnlabelled(await requireParcel(shipmentId, parcelId))
      // Money was spent on it once: its operations and attempt log stay, and so does the parcel.
      if ((await data.parcels.operations(parcelId)).some((operation) => operation.state !== 'failed')) throw new DeliveryErrors.ParcelHasLabelHistory(parcelId)
      const outcome = await data.parcels.change({ parcelId }, () => ({
        remove: true,
        messages: parcelEvent('parcelRemoved', userOf(context)),
        claimFor: dispatcher.claim,
      }))
      return committed(outcome, () => new DeliveryErrors.ParcelNotFound(parcelId))
    })
  }

  // ---- providers, addresses, measures ----


  async function deliveryProvider(handle: unknown, field = 'integration'): Promise<DeliveryProviderAt> {
    if (typeof handle !== 'string' || handle === '') throw new ShipmentValidationError({ [field]: ['is required: the handle of an integration that sells labels'] })
    const row = await data.findIntegration(handle)
    if (!row) throw new ShipmentValidationError({ [field]: [`no integration has the handle "${handle}"`] })
    const provider = registry.get(row.providerId ?? '')
    if (!provider?.deliveries) throw new ShipmentValidationError({ [field]: [`the integration "${handle}" does not sell labels`] })
    if (!integrations.isEnabled(row)) throw new ShipmentUpdateRejectedError(`The integration ${handle} is disabled.`)
    let context: ProviderContext
    try {
      context = integrations.contextFor(row, deps.logger, { integration: handle })
    } catch (error) {
      throw new ShipmentUpdateRejectedError(error instanceof Error ? error.message : String(error))
    }
    return { row, provider: provider as DeliveryProviderAt['provider'], context }
  }

  function measures(parcel: Pick<ParcelRow, 'weight' | 'weightUnit' | 'length' | 'width' | 'height' | 'dimensionUnit'>): ParcelMeasures {
    const unit = parcel.dimensionUnit as DimensionUnit | null
    const side = (value: string | null) => (value !== null && unit !== null ? toInches(value, unit) : null)
    return { weightOunces: toOunces(parcel.weight, parcel.weightUnit as WeightUnit), lengthInches: side(parcel.length), widthInches: side(parcel.width), heightInches: side(parcel.height) }
  }

  async function addresses(orderId: number): Promise<{ from: PostalAddress; to: PostalAddress }> {
    const [{ address: from }, order] = await Promise.all([deps.shipFrom.get(), deps.orderStore.findOrder(orderId)])
    if (!from) throw new ShipmentUpdateRejectedError('No ship-from address is set (on the Boxes page, or the deliveries.shipFrom option): rates and labels need one.')
    if (!order?.shippingAddress) throw new ShipmentUpdateRejectedError(`Order ${order?.reference ?? orderId} has no shipping address: rates and labels need one.`)
    return { from, to: order.shippingAddress }
  }

  /** A fingerprint of everything a quote depends on: the parcel's size, both addresses, the integration. */
  function fingerprint(integrationId: number, parcel: ParcelRow, from: PostalAddress, to: PostalAddress): string {
    const inputs = [integrationId, parcel.weight, parcel.weightUnit, parcel.length, parcel.width, parcel.height, parcel.dimensionUnit, from, to]
    return createHash('sha256').update(JSON.stringify(inputs)).digest('hex')
  }

  function journalFor(operationId: string): DeliveryJournal {
    return {
      externalIdKnown: (externalId) => data.parcels.updateOperation(operationId, { externalId }),
      attempt: (entry) =>
        data.parcels.recordAttempt({
          operationId,
          step: entry.step,
          request: redacted(entry.request) as Record<string, unknown>,
          response: redacted(entry.response) as Record<string, unknown>,
          statusCode: entry.statusCode,
          error: entry.error,
          durationMs: Math.max(0, Math.round(entry.durationMs)),
        }),
    }
  }

  /** A provider's refusal in the store admin's words: 422 `{success: false, error}`. */
  const refusal = (error: DeliveryProviderError) => new ShipmentUpdateRejectedError(providerFailureMessage(error), { cause: error })

  // ---- rates ----

  async function quoteRates(shipmentId: number, parcelId: number, input: { integration?: unknown }): Promise<RateQuote[]> {
    const parcel = await requireParcel(shipmentId, parcelId)
    const shipment = await requireShipment(shipmentId)
    const at = await deliveryProvider(input.integration)
    if (!at.provider.deliveries.quoteRates) throw new ShipmentValidationError({ integration: [`the integration "${at.row.handle}" gives no rates`] })
    const { from, to } = await addresses(shipment.orderId)
    const request = { shipmentReference: shipment.reference, parcelId, parcel: measures(parcel), from, to }
    // The rates calls of a parcel share one entry of the attempt log: there is no label operation yet.
    const journal = journalFor(`rates:${parcelId}`)
    const started = performance.now()
    let offers: unknown
    try {
      offers = await at.provider.deliveries.quoteRates(request, at.context)
    } catch (error) {
      if (error instanceof DeliveryProviderError) {
        await journal.attempt({ step: 'rates', request: { integration: at.row.handle }, response: { code: error.providerCode }, statusCode: null, error: error.message, durationMs: performance.now() - started })
        throw refusal(error)
      }
      throw error
    }
    const { kept: usable, dropped } = checkOffers(offers)
    const offered = Array.isArray(offers) ? offers.length : 0
    await journal.attempt({ step: 'rates', request: { integration: at.row.handle }, response: { offered, kept: usable.length, dropped }, statusCode: null, error: null, durationMs: performance.now() - started })
    if (dropped.length > 0) deps.logger.warn({ shipmentId, parcelId, integration: at.row.handle, dropped: dropped.map((each) => each.reason) }, 'Rates: offers the provider gave were dropped (see the attempt log)')
    if (usable.length === 0 && dropped.length > 0) throw new ShipmentUpdateRejectedError(`No offer of the carrier could be used: ${dropped[0]!.reason} (${dropped.length} dropped; see the attempt log).`)
    const expiresAt = new Date(deps.clock() + deps.quoteLifetimeMs)
    const print = fingerprint(at.row.id, parcel, from, to)
    const stored = await data.parcels.insertQuotes(
      usable.map((offer) => ({
        shipmentId,
        parcelId,
        integrationId: at.row.id,
        carrier: offer.carrier,
        service: offer.service,
        amount: offer.amount,
        currency: offer.currency,
        deliveryDays: offer.deliveryDays,
        deliveryDate: offer.deliveryDate,
        externalRateId: offer.externalRateId ?? null,
        fingerprint: print,
        expiresAt,
      })),
    )
    return stored.map((row) => presentQuote(row, at.row.handle)).sort(byPriceThenDays)
  }

  const presentQuote = (row: RateQuoteRow, integration: string): RateQuote => ({
    id: row.id,
    parcelId: row.parcelId,
    integration,
    carrier: row.carrier,
    service: row.service,
    amount: row.amount,
    currency: row.currency,
    deliveryDays: row.deliveryDays,
    deliveryDate: row.deliveryDate,
    expiresAt: formatIsoWithOffset(row.expiresAt.getTime(), timeZone),
  })

  /** Cheapest first (exact decimals compared as decimals), then fastest. */
  function byPriceThenDays(a: RateQuote, b: RateQuote): number {
    const compared = compareDecimals(a.amount, b.amount)
    return compared !== 0 ? compared : (a.deliveryDays ?? Number.MAX_SAFE_INTEGER) - (b.deliveryDays ?? Number.MAX_SAFE_INTEGER)
  }

  // ---- labels ----

  /**
   * Keeps the shipment's own tracking number working: a label's tracking number (with its carrier,
   * service and tracker page) fills a shipment that has none, so tracking webhooks that match shipments
   * by tracking number (EasyPost's tracker among them) move it; a void clears it again. Through the
   * shipment's update path, after the label's commit: a failure is logged, the label stays.
   */
  async function syncShipmentTracking(shipmentId: number, change: { bought: PurchasedLabel } | { voided: string | null }, userId: string | null): Promise<void> {
    try {
      const shipment = await deps.shipments.get(shipmentId)
      if (!shipment) return
      if ('bought' in change && shipment.trackingNumber === null) {
        const { bought } = change
        await deps.shipments.update(shipmentId, { trackingNumber: bought.trackingNumber, carrier: bought.carrier, service: bought.service, trackingUrl: bought.trackingUrl ?? undefined }, { userId })
      } else if ('voided' in change && change.voided !== null && shipment.trackingNumber === change.voided) {
        await deps.shipments.update(shipmentId, { trackingNumber: '', trackingUrl: '' }, { userId })
      }
    } catch (error) {
      deps.logger.warn({ err: error, shipmentId }, "Deliveries: the shipment's own tracking number could not follow its label")
    }
  }

  /** Writes a bought label on the parcel with its history row, the operation's state and the event, in one transaction. */
  async function commitPurchase(operation: LabelOperationRow, label: PurchasedLabel, integration: string): Promise<Parcel> {
    const outcome = await data.parcels.change({ parcelId: operation.parcelId }, (): ParcelPlan => ({
      columns: {
        status: 'labelled',
        trackingNumber: label.trackingNumber,
        trackingUrl: label.trackingUrl,
        carrier: label.carrier,
        service: label.service,
        labelUrl: label.labelUrl,
        labelFormat: label.labelFormat,
        labelCost: label.cost,
        labelCurrency: label.currency,
        labelOperationId: operation.operationId,
      },
      operation: { operationId: operation.operationId, columns: { state: 'purchased', externalId: label.externalId, error: null } },
      history: { action: 'labelPurchased', message: `${label.carrier} ${label.service} ${label.trackingNumber} (${label.cost} ${label.currency})`, userId: operation.userId },
      messages: parcelEvent('labelPurchased', operation.userId, { operationId: operation.operationId, externalId: label.externalId, integration }),
      claimFor: dispatcher.claim,
    }))
    const parcel = await committed(outcome, () => new DeliveryErrors.ParcelNotFound(operation.parcelId))
    await syncShipmentTracking(operation.shipmentId, { bought: label }, operation.userId)
    return parcel
  }

  async function buyLabel(shipmentId: number, parcelId: number, input: BuyLabelInput, context: DeliveryContext = {}): Promise<LabelPurchaseResult> {
    await requireParcel(shipmentId, parcelId)
    const shipment = await requireShipment(shipmentId)
    const labelFormat = input.labelFormat ?? 'PDF'
    if (!(LABEL_FORMATS as readonly string[]).includes(labelFormat)) throw new ShipmentValidationError({ labelFormat: [`must be one of ${LABEL_FORMATS.join(', ')}`] })
    const at = await deliveryProvider(input.integration)
    const { from, to } = await addresses(shipment.orderId)

    return withParcelLock(parcelId, async () => {
      const parcel = await requireParcel(shipmentId, parcelId)
      if (parcel.labelOperationId !== null) throw new DeliveryErrors.LabelExists(parcelId)
      let operation = await data.parcels.activeOperation(parcelId)
      if (operation?.state === 'purchased') throw new DeliveryErrors.LabelExists(parcelId)
      // An earlier purchase whose outcome is unknown is finished first, as it was asked: never a second one beside it.
      const resumed = operation !== undefined
      if (!operation) {
        const choice = await chosenRate(input, parcel, at.row, from, to)
        const begun = await data.parcels.beginOperation({
          operationId: randomUUID(),
          parcelId,
          shipmentId,
          integrationId: at.row.id,
          providerId: at.provider.id,
          quoteId: input.quoteId ?? null,
          carrier: choice.carrier,
          service: choice.service,
          userId: userOf(context),
        })
        if (begun === 'busy') throw new DeliveryErrors.PurchaseBusy(parcelId)
        operation = begun
      }
      const op = operation
      const operationAt = op.integrationId === at.row.id ? at : await deliveryProviderById(op.integrationId)
      const journal = journalFor(op.operationId)
      const request: LabelPurchaseRequest = {
        operationId: op.operationId,
        shipmentReference: shipment.reference,
        parcelId,
        parcel: measures(parcel),
        from,
        to,
        carrier: op.carrier,
        service: op.service,
        labelFormat,
        externalId: op.externalId,
      }
      const recover = async (): Promise<PurchasedLabel | null> => {
        const fresh = await data.parcels.findOperation(op.operationId)
        if (!fresh?.externalId) return null
        const found = await operationAt.provider.deliveries.recoverLabel({ ...request, externalId: fresh.externalId }, operationAt.context, journal)
        return found.state === 'purchased' ? found.label : null
      }
      const finish = async (label: PurchasedLabel, recovered: boolean): Promise<LabelPurchaseResult> => ({
        parcel: await commitPurchase(op, label, operationAt.row.handle),
        operationId: op.operationId,
        recovered,
      })

      if (resumed) {
        try {
          const label = await recover()
          if (label) return finish(label, true)
        } catch (error) {
          if (!(error instanceof DeliveryProviderError)) throw error
          throw new DeliveryErrors.OutcomeUnknown(parcelId, unknownOutcomeReason(undefined, error))
        }
      }
      try {
        // A purchase begun just now has no provider id yet; a resumed one may have got it during the recovery.
        const externalId = resumed ? ((await data.parcels.findOperation(op.operationId))?.externalId ?? null) : op.externalId
        const label = await operationAt.provider.deliveries.purchaseLabel({ ...request, externalId }, operationAt.context, journal)
        return await finish(label, resumed)
      } catch (error) {
        if (!(error instanceof DeliveryProviderError)) {
          // Anything else (a bug, a dropped connection to our own database) leaves the outcome open.
          deps.logger.error({ err: error, operationId: op.operationId }, 'Label purchase failed with an unexpected error; its outcome is reconciled on the next try')
          throw new DeliveryErrors.OutcomeUnknown(parcelId, unknownOutcomeReason(error))
        }
        if (error.kind === 'refused') {
          await data.parcels.updateOperation(op.operationId, { state: 'failed', error: error.message })
          throw refusal(error)
        }
        // Bought already, or no answer: look it up by the provider's id instead of buying again.
        let label: PurchasedLabel | null = null
        let lookupFailure: unknown
        try {
          label = await recover()
        } catch (lookupError) {
          lookupFailure = lookupError
          deps.logger.warn({ err: lookupError, operationId: op.operationId }, 'Label purchase: the lookup after an unknown outcome failed too')
        }
        if (label) return finish(label, true)
        const reason = unknownOutcomeReason(error, lookupFailure)
        await data.parcels.updateOperation(op.operationId, { error: reason })
        throw new DeliveryErrors.OutcomeUnknown(parcelId, reason)
      }
    })
  }

  async function deliveryProviderById(integrationId: number): Promise<DeliveryProviderAt> {
    const row = (await data.listIntegrations()).find((each) => each.id === integrationId)
    if (!row) throw new ShipmentUpdateRejectedError(`The integration of an unfinished label purchase (id ${integrationId}) no longer exists.`)
    return deliveryProvider(row.handle)
  }

  /** The carrier and service to buy: from a quote still valid for the parcel as it is, or named. */
  async function chosenRate(input: BuyLabelInput, parcel: ParcelRow, integration: IntegrationRow, from: PostalAddress, to: PostalAddress) {
    if (input.quoteId !== undefined) {
      const quote = await data.parcels.findQuote(input.quoteId)
      if (!quote || quote.parcelId !== parcel.id) throw new DeliveryErrors.QuoteNotFound(input.quoteId)
      if (quote.integrationId !== integration.id) throw new ShipmentValidationError({ quoteId: [`quote ${quote.id} is from another integration`] })
      if (quote.expiresAt.getTime() <= deps.clock()) throw new DeliveryErrors.QuoteExpired(quote.id)
      if (quote.fingerprint !== fingerprint(integration.id, parcel, from, to)) throw new DeliveryErrors.QuoteChanged(quote.id)
      return { carrier: quote.carrier, service: quote.service }
    }
    const errors: Record<string, string[]> = {}
    for (const field of ['carrier', 'service'] as const) {
      const value = input[field]
      if (typeof value !== 'string' || value.trim() === '' || value.length > 255) errors[field] = ['is required (or a quoteId), at most 255 characters']
      else {
        const problem = textProblem(value, { maxLength: TEXT_LIMITS.short })
        if (problem) errors[field] = [problem]
      }
    }
    if (Object.keys(errors).length > 0) throw new ShipmentValidationError(errors)
    return { carrier: input.carrier!, service: input.service! }
  }

  async function voidLabel(shipmentId: number, parcelId: number, context: DeliveryContext = {}): Promise<{ parcel: Parcel; refundStatus: string }> {
    await requireParcel(shipmentId, parcelId)
    return withParcelLock(parcelId, async () => {
      const parcel = await requireParcel(shipmentId, parcelId)
      const operation = parcel.labelOperationId ? await data.parcels.findOperation(parcel.labelOperationId) : undefined
      if (!operation || operation.state !== 'purchased' || !operation.externalId) throw new DeliveryErrors.LabelMissing(parcelId)
      const at = await deliveryProviderById(operation.integrationId)
      let refundStatus: string
      try {
        ;({ refundStatus } = await at.provider.deliveries.voidLabel({ externalId: operation.externalId }, at.context, journalFor(operation.operationId)))
      } catch (error) {
        if (error instanceof DeliveryProviderError) throw refusal(error)
        throw error
      }
      const userId = userOf(context)
      const outcome = await data.parcels.change({ parcelId }, () => ({
        columns: {
          status: 'pending',
          trackingNumber: null,
          trackingUrl: null,
          carrier: null,
          service: null,
          labelUrl: null,
          labelFormat: null,
          labelCost: null,
          labelCurrency: null,
          labelOperationId: null,
        },
        operation: { operationId: operation.operationId, columns: { state: 'voided' } },
        history: { action: 'labelVoided', message: `Refund ${refundStatus} (${parcel.carrier ?? ''} ${parcel.trackingNumber ?? ''})`.trim(), userId },
        messages: parcelEvent('labelVoided', userId, { operationId: operation.operationId, externalId: operation.externalId, integration: at.row.handle, refundStatus }),
        claimFor: dispatcher.claim,
      }))
      const voided = await committed(outcome, () => new DeliveryErrors.ParcelNotFound(parcelId))
      await syncShipmentTracking(shipmentId, { voided: parcel.trackingNumber }, userId)
      return { parcel: voided, refundStatus }
    })
  }

  /** The label in another format (EasyPost converts from PNG); the stored label stays as bought. */
  async function labelDocument(shipmentId: number, parcelId: number, format: LabelFormat): Promise<{ url: string; format: string }> {
    const parcel = await requireParcel(shipmentId, parcelId)
    const operation = parcel.labelOperationId ? await data.parcels.findOperation(parcel.labelOperationId) : undefined
    if (!operation?.externalId || parcel.labelUrl === null) throw new DeliveryErrors.LabelMissing(parcelId)
    if ((parcel.labelFormat ?? '').toUpperCase() === format) return { url: parcel.labelUrl, format }
    const at = await deliveryProviderById(operation.integrationId)
    if (!at.provider.deliveries.labelDocument) throw new ShipmentUpdateRejectedError(`The integration ${at.row.handle} cannot convert labels; the label is ${parcel.labelFormat}.`)
    try {
      return await at.provider.deliveries.labelDocument({ externalId: operation.externalId, format }, at.context, journalFor(operation.operationId))
    } catch (error) {
      if (error instanceof DeliveryProviderError) throw refusal(error)
      throw error
    }
  }

  async function labelOperations(shipmentId: number, parcelId: number): Promise<LabelOperation[]> {
    await requireParcel(shipmentId, parcelId)
    const operations = await data.parcels.operations(parcelId)
    return Promise.all(
      operations.map(async (row) => ({
        operationId: row.operationId,
        parcelId: row.parcelId,
        state: row.state,
        carrier: row.carrier,
        service: row.service,
        externalId: row.externalId,
        error: row.error,
        userId: row.userId,
        dateCreated: formatIsoWithOffset(row.createdAt.getTime(), timeZone),
        attempts: (await data.parcels.attempts(row.operationId)).map(({ step, request, response, statusCode, error, durationMs, createdAt }) => ({
          step,
          request,
          response,
          statusCode,
          error,
          durationMs,
          dateCreated: formatIsoWithOffset(createdAt.getTime(), timeZone),
        })),
      })),
    )
  }

  /** Where a parcel stands on its way: tracking moves it forward only, never back. */
  const PROGRESS: Record<string, number> = { pending: 0, labelled: 1, shipped: 2, delivered: 3 }

  /**
   * A tracking event for a parcel's tracking number: `delivered` (the carrier's own code) or a mapped
   * `shipped` moves the parcel forward, with a history row and a parcelChanged event; null when no parcel
   * holds the number.
   */
  async function trackParcel(event: { trackingNumber: string; status: string; code: string; integration: string }) {
    const found = await data.parcels.findByTrackingNumber(event.trackingNumber)
    if (!found) return null
    const target = event.code.toLowerCase() === 'delivered' ? 'delivered' : event.status === 'shipped' ? 'shipped' : null
    const outcome = await data.parcels.change({ parcelId: found.id }, (current) => {
      if (!current || target === null || (PROGRESS[current.status] ?? 0) >= PROGRESS[target]!) return {}
      return {
        columns: { status: target },
        history: { action: target, message: `${event.integration}: ${event.code}`, userId: null },
        messages: parcelEvent('parcelChanged', null),
        claimFor: dispatcher.claim,
      }
    })
    if (!outcome) return null
    await dispatcher.deliver(outcome.messages)
    const parcels = await data.parcels.list(outcome.row.shipmentId)
    return {
      shipmentId: outcome.row.shipmentId,
      parcelId: outcome.row.id,
      parcelStatus: outcome.row.status,
      everyParcelShipped: parcels.every((parcel) => (PROGRESS[parcel.status] ?? 0) >= PROGRESS.shipped!),
    }
  }

  return {
    /** For the returns service only (the plugin leaves it off `app.shipments.deliveries`). */
    labelPort: { deliveryProvider, deliveryProviderById, journalFor, addresses, measures, refusal },
    trackParcel,
    /** Where parcels ship from: the stored setting, else the `deliveries.shipFrom` option. */
    shipFrom: () => deps.shipFrom.get(),
    /** Stores the ship-from address (422 field by field when it is not one); null clears the setting. */
    setShipFrom: (address: PostalAddress | null) => deps.shipFrom.set(address),
    listParcels,
    addParcel,
    updateParcel,
    removeParcel,
    quoteRates,
    buyLabel,
    voidLabel,
    labelDocument,
    labelOperations,
  }
}

/** Compares two exact decimal strings (as written by providers: digits, one optional point, optional sign). */
export function compareDecimals(a: string, b: string): number {
  const scale = (value: string) => {
    const negative = value.startsWith('-')
    const [whole, fraction = ''] = value.replace(/^[-+]/, '').split('.')
    const scaled = BigInt(whole || '0') * 10n ** 12n + BigInt((fraction + '0'.repeat(12)).slice(0, 12))
    return negative ? -scaled : scaled
  }
  const difference = scale(a) - scale(b)
  return difference < 0n ? -1 : difference > 0n ? 1 : 0
}
