// EasyPost's delivery side through its official Node client (`@easypost/api`, an optional peer
// dependency loaded on first use): rates, a label bought on an EasyPost shipment whose id is committed
// before the buy, recovery by that id, label conversion and refunds. EasyPost has no idempotency key:
// exactly once rests on the `shp_` id (a second buy of it is refused with SHIPMENT.POSTAGE.EXISTS).
import { DeliveryProviderError, retryAfterMs, type DeliveryJournal, type DeliveryMethods, type LabelFormat, type PostalAddress, type PurchasedLabel, type RateOffer, type RateRequest } from '../delivery-provider.js'
import type { ProviderContext } from '../providers.js'
import { AsyncLocalStorage } from 'node:async_hooks'
import { answerExcerpt } from '../../http/answer-excerpt.js'
import { servicesOfCarrierAccounts } from './easypost-services.js'
import { customsSummary, easyPostCustoms, formsOf } from './easypost-customs.js'

export const EASYPOST_DEFAULT_TIMEOUT_MS = 15_000

/** The settings the delivery side reads (the provider's schema holds them). */
export interface EasyPostLabelSettings {
  apiKey?: string | undefined
  apiBaseUrl?: string | undefined
  /** The mode the key belongs to: every answer's `mode` must match it. Default test. */
  mode?: 'test' | 'production' | undefined
  /** The deadline of each call to EasyPost, in milliseconds. */
  timeoutMs?: number | undefined
}

// The client's shapes, as much as this module reads of them.
interface EasyPostRate {
  id: string
  carrier: string
  service: string
  rate: string
  currency: string
  delivery_days?: number | null
  delivery_date?: string | null
}
interface EasyPostShipment {
  id: string
  mode?: string
  reference?: string | null
  rates?: EasyPostRate[]
  messages?: Array<{ carrier?: string; type?: string; message?: string }>
  selected_rate?: EasyPostRate | null
  postage_label?: { label_url?: string | null; label_pdf_url?: string | null; label_zpl_url?: string | null; label_file_type?: string | null } | null
  tracking_code?: string | null
  tracker?: { id?: string; public_url?: string | null } | null
  refund_status?: string | null
  /** With a bought international shipment: CN22/CN23, commercial invoice... (untrusted: see formsOf). */
  forms?: unknown
}
export interface EasyPostClient {
  CarrierAccount: { all(params?: Record<string, unknown>): Promise<unknown> }
  Shipment: {
    create(params: Record<string, unknown>): Promise<EasyPostShipment>
    retrieve(id: string): Promise<EasyPostShipment>
    buy(id: string, rate: string): Promise<EasyPostShipment>
    convertLabelFormat(id: string, format: string): Promise<EasyPostShipment>
    refund(id: string): Promise<EasyPostShipment>
  }
  /** Manifests: see easypost-scan-forms.ts. */
  ScanForm: { create(params: { shipments: Array<{ id: string }> }): Promise<unknown> }
}
type EasyPostConstructor = new (key: string, options: { baseUrl: string; requestMiddleware: (request: SuperagentRequest) => SuperagentRequest }) => EasyPostClient
interface SuperagentRequest {
  timeout(limits: { response: number; deadline: number }): SuperagentRequest
  on(event: 'response', listener: (response: { status: number; type?: string; text?: string; header?: Record<string, unknown> }) => void): SuperagentRequest
}

/**
 * What EasyPost (or a proxy in front of it) answered the call under way: the client throws a bare
 * TypeError for an answer that is not EasyPost's error JSON (a proxy's HTML 502), losing its status.
 * Each call runs in its own store, so concurrent calls on one cached client never mix their answers.
 */
export interface Answered {
  status: number
  contentType: string | null
  text: string | null
  /** The Retry-After header of the answer, as sent (a 429's). */
  retryAfter: unknown
}
export const answeredCall = new AsyncLocalStorage<{ answer: Answered | null }>()

/** EasyPost error codes whose purchase outcome is not known: look the shipment up, never buy again blindly. */
const OUTCOME_UNKNOWN_CODES = new Set(['SHIPMENT.PURCHASE.IN_PROGRESS', 'SHIPMENT.POSTAGE.NO_RESPONSE'])

let clientClass: Promise<EasyPostConstructor> | null = null
async function loadClient(): Promise<EasyPostConstructor> {
  clientClass ??= import('@easypost/api')
    .then((module) => (module as unknown as { default: EasyPostConstructor }).default)
    .catch((error: unknown) => {
      clientClass = null
      throw new DeliveryProviderError('EasyPost labels need the official client: npm install @easypost/api', 'refused', null, { cause: error })
    })
  return clientClass
}

/**
 * Clients by key, base URL and timeout: building one attaches every service of the client (about half
 * a millisecond), so a purchase reuses the one made for the same settings. A changed key or URL makes
 * a new one; the few kept are those of the integrations' settings over the process's life.
 */
const clients = new Map<string, EasyPostClient>()
const MAX_CACHED_CLIENTS = 32

export async function clientFor(settings: EasyPostLabelSettings, defaultBaseUrl: string): Promise<EasyPostClient> {
  if (!settings.apiKey) throw new DeliveryProviderError('EasyPost: no apiKey is set, so no rates or labels can be had.', 'refused')
  const EasyPost = await loadClient()
  const timeout = settings.timeoutMs ?? EASYPOST_DEFAULT_TIMEOUT_MS
  const baseUrl = `${(settings.apiBaseUrl ?? defaultBaseUrl).replace(/\/+$/, '')}/`
  const key = JSON.stringify([settings.apiKey, baseUrl, timeout])
  let client = clients.get(key)
  if (!client) {
    // The client keeps a `timeout` option it never applies: the deadline is set on each request instead.
    client = new EasyPost(settings.apiKey, {
      baseUrl,
      requestMiddleware: (request) => {
        const call = answeredCall.getStore()
        if (call) request.on('response', (response) => (call.answer = { status: response.status, contentType: response.type ?? null, text: response.text ?? null, retryAfter: response.header?.['retry-after'] }))
        return request.timeout({ response: timeout, deadline: timeout })
      },
    })
    if (clients.size >= MAX_CACHED_CLIENTS) clients.delete(clients.keys().next().value!)
    clients.set(key, client)
  }
  return client
}

/**
 * The client's error as we classify it: by EasyPost's code first, then the status it (or a proxy)
 * answered, in its words; no answer at all (a timeout, a dropped connection) is the one "did not answer".
 */
export function classify(error: unknown, step: string, answered: Answered | null, settings: EasyPostLabelSettings): DeliveryProviderError {
  if (error instanceof DeliveryProviderError) return error
  const { statusCode, code, message, timeout } = (error ?? {}) as { statusCode?: unknown; code?: unknown; message?: unknown; timeout?: unknown }
  const providerCode = typeof statusCode === 'number' && typeof code === 'string' ? code : null
  const text = typeof message === 'string' && message !== '' ? message : 'no message'
  if (providerCode === 'SHIPMENT.POSTAGE.EXISTS') return new DeliveryProviderError(`EasyPost: the label was bought already (${text}).`, 'exists', providerCode, { cause: error })
  if (providerCode !== null && OUTCOME_UNKNOWN_CODES.has(providerCode)) return new DeliveryProviderError(`EasyPost could not say whether the label was bought (${providerCode}: ${text}).`, 'unknown', providerCode, { cause: error })
  const status = typeof statusCode === 'number' ? statusCode : (answered?.status ?? null)
  if (status === null) {
    if (typeof timeout === 'number' || code === 'ECONNABORTED') return new DeliveryProviderError(`EasyPost did not answer the ${step} within ${settings.timeoutMs ?? EASYPOST_DEFAULT_TIMEOUT_MS} ms`, 'unknown', null, { cause: error })
    // A refused or dropped connection: nothing was answered.
    return new DeliveryProviderError(`EasyPost did not answer the ${step} (${text})`, 'unknown', null, { cause: error })
  }
  // EasyPost's own error JSON carries its message and code; anything else (a proxy's page) is quoted shortly.
  const said = typeof statusCode === 'number' ? `${text}${providerCode ? ` (${providerCode})` : ''}` : answerExcerpt(answered?.text, answered?.contentType, [settings.apiKey])
  if (status >= 500 || status === 408) return new DeliveryProviderError(`EasyPost answered the ${step} with ${status}: ${said}`, 'unknown', providerCode, { cause: error })
  if (status === 402) return new DeliveryProviderError(`EasyPost: the account has no funds for this label (${said}).`, 'refused', providerCode, { cause: error })
  if (status === 429) {
    const wait = retryAfterMs(answered?.retryAfter)
    const when = wait === null ? 'try again in a minute' : `try again in ${Math.ceil(wait / 1000)} s`
    return new DeliveryProviderError(`EasyPost is rate limiting this account: ${when}.`, 'refused', providerCode, { cause: error, rateLimited: true, retryAfterMs: wait })
  }
  if (typeof statusCode !== 'number') return new DeliveryProviderError(`EasyPost refused the ${step} with ${status}: ${said}`, 'refused', null, { cause: error })
  return new DeliveryProviderError(`EasyPost refused the ${step}: ${text}${providerCode ? ` (${providerCode})` : ''}.`, 'refused', providerCode, { cause: error })
}

/** What the attempt log keeps of a shipment answer: ids, mode, rates and the label, never the addresses. */
function summary(shipment: EasyPostShipment | undefined): Record<string, unknown> {
  if (!shipment) return {}
  return {
    id: shipment.id,
    mode: shipment.mode,
    reference: shipment.reference ?? null,
    rates: (shipment.rates ?? []).map((rate) => ({ id: rate.id, carrier: rate.carrier, service: rate.service, rate: rate.rate, currency: rate.currency })),
    messages: shipment.messages ?? [],
    selectedRate: shipment.selected_rate ? { id: shipment.selected_rate.id, carrier: shipment.selected_rate.carrier, service: shipment.selected_rate.service, rate: shipment.selected_rate.rate } : null,
    trackingCode: shipment.tracking_code ?? null,
    labelUrl: shipment.postage_label?.label_url ?? null,
    refundStatus: shipment.refund_status ?? null,
  }
}

/** One call to EasyPost, logged with its answer (or error) and duration, classified when it fails. */
async function logged<Answer = EasyPostShipment>(
  journal: DeliveryJournal | null,
  settings: EasyPostLabelSettings,
  step: string,
  request: Record<string, unknown>,
  call: () => Promise<Answer>,
): Promise<Answer> {
  const started = performance.now()
  const answered: { answer: Answered | null } = { answer: null }
  try {
    const answer = await answeredCall.run(answered, call)
    if (journal) await journal.attempt({ step, request, response: summary(answer as EasyPostShipment), statusCode: 200, error: null, durationMs: performance.now() - started })
    return answer
  } catch (error) {
    const failure = classify(error, step, answered.answer, settings)
    const { statusCode } = (error ?? {}) as { statusCode?: unknown }
    await journal?.attempt({
      step,
      request,
      response: { code: failure.providerCode },
      statusCode: typeof statusCode === 'number' ? statusCode : (answered.answer?.status ?? null),
      error: failure.message,
      durationMs: performance.now() - started,
    })
    throw failure
  }
}

const easyPostAddress = (address: PostalAddress) => ({
  name: address.name,
  company: address.company ?? null,
  street1: address.street1,
  street2: address.street2 ?? null,
  city: address.city,
  state: address.state ?? null,
  zip: address.postalCode,
  country: address.country,
  phone: address.phone ?? null,
  email: address.email ?? null,
})

function checkMode(shipment: EasyPostShipment, settings: EasyPostLabelSettings): void {
  const expected = settings.mode ?? 'test'
  if (shipment.mode !== undefined && shipment.mode !== expected) {
    throw new DeliveryProviderError(`EasyPost answered in ${shipment.mode} mode, but the integration is set to ${expected} mode: check the API key.`, 'refused')
  }
}

const labelUrlIn = (shipment: EasyPostShipment, format: string): string | null => {
  const label = shipment.postage_label
  if (!label) return null
  if (format === 'PDF') return label.label_pdf_url ?? null
  if (format === 'ZPL') return label.label_zpl_url ?? null
  return label.label_url ?? null
}

/** A logger's warning, as much as the forms' check needs. */
type Warn = (details: Record<string, unknown>, message: string) => void

function purchasedLabel(shipment: EasyPostShipment, format: string, warn: Warn): PurchasedLabel {
  const rate = shipment.selected_rate
  const url = labelUrlIn(shipment, format) ?? shipment.postage_label?.label_url ?? null
  if (!rate || !shipment.tracking_code || !url) throw new DeliveryProviderError(`EasyPost answered shipment ${shipment.id} without its label, tracking code or rate.`, 'unknown')
  return {
    externalId: shipment.id,
    trackingNumber: shipment.tracking_code,
    carrier: rate.carrier,
    service: rate.service,
    labelUrl: url,
    labelFormat: labelUrlIn(shipment, format) ? format : (shipment.postage_label?.label_file_type?.replace(/^.*\//, '').toUpperCase() ?? 'PNG'),
    cost: String(rate.rate),
    currency: rate.currency,
    trackingUrl: shipment.tracker?.public_url ?? null,
    // A bad form is dropped (and logged); the label and the good forms are kept.
    forms: formsOf(shipment.forms, (problem, index) => warn({ shipment: shipment.id, index, problem }, 'EasyPost answered a form that is not kept')),
  }
}

const warnOf = (context: ProviderContext<EasyPostLabelSettings>): Warn => (details, message) => context.logger.warn(details, message)

/** The delivery methods of the built-in EasyPost provider, over its settings. */
export function easyPostDeliveries<Settings extends EasyPostLabelSettings>(defaultBaseUrl: string): DeliveryMethods<ProviderContext<Settings>> {
  /** A new EasyPost shipment for the parcel, with our id as its reference. */
  async function createShipment(client: EasyPostClient, settings: Settings, journal: DeliveryJournal | null, request: RateRequest, reference: string) {
    const { parcel } = request
    // An international parcel's declaration (complete and checked before any call); the incoterm is a shipment option.
    const customs = request.customs ? easyPostCustoms(request.customs) : null
    const params = {
      to_address: easyPostAddress(request.to),
      from_address: easyPostAddress(request.from),
      parcel: {
        weight: Number(parcel.weightOunces),
        ...(parcel.lengthInches && parcel.widthInches && parcel.heightInches
          ? { length: Number(parcel.lengthInches), width: Number(parcel.widthInches), height: Number(parcel.heightInches) }
          : {}),
      },
      reference,
      // EasyPost swaps the addresses of a return shipment itself: the label goes from the customer to the shop.
      ...(request.isReturn ? { is_return: true } : {}),
      ...(customs ? { customs_info: customs.customs_info } : {}),
      // PNG, the one format EasyPost converts from later: the others are had by conversion.
      options: { label_format: 'PNG', ...(customs ? { incoterm: customs.incoterm } : {}) },
    }
    const logRequest = { reference, parcel: params.parcel, to: { country: request.to.country, zip: request.to.postalCode }, isReturn: request.isReturn === true, ...(customs ? { customs: customsSummary(request.customs) } : {}) }
    const shipment = await logged(journal, settings, 'create', logRequest, () => client.Shipment.create(params))
    checkMode(shipment, settings)
    return shipment
  }

  return {
    async quoteRates(request, context) {
      const client = await clientFor(context.settings, defaultBaseUrl)
      const shipment = await createShipment(client, context.settings, null, request, `quote:${request.shipmentReference}:${request.parcelId}`)
      const offers: RateOffer[] = (shipment.rates ?? []).map((rate) => ({
        carrier: rate.carrier,
        service: rate.service,
        // As given: the service refuses an offer whose amount is not a decimal string (a number may be rounded already).
        amount: rate.rate,
        currency: rate.currency,
        deliveryDays: rate.delivery_days ?? null,
        deliveryDate: rate.delivery_date ?? null,
        externalRateId: rate.id,
      }))
      if (offers.length === 0 && (shipment.messages ?? []).length > 0) {
        const reasons = (shipment.messages ?? []).map((message) => `${message.carrier ?? 'carrier'}: ${message.message ?? 'no rate'}`).join('; ')
        throw new DeliveryProviderError(`No carrier offered a rate: ${reasons}`, 'refused', 'SHIPMENT.RATES.UNAVAILABLE')
      }
      return offers
    },

    async purchaseLabel(request, context, journal) {
      const client = await clientFor(context.settings, defaultBaseUrl)
      let shipment: EasyPostShipment
      if (request.externalId) {
        // An earlier attempt created it (its outcome unknown, found not bought): buy on it, never on a new one.
        shipment = await logged(journal, context.settings, 'retrieve', { id: request.externalId }, () => client.Shipment.retrieve(request.externalId!))
        checkMode(shipment, context.settings)
        if (shipment.postage_label) return purchasedLabel(shipment, request.labelFormat, warnOf(context))
      } else {
        shipment = await createShipment(client, context.settings, journal, request, request.operationId)
        await journal.externalIdKnown(shipment.id)
      }
      const wanted = (value: string) => value.trim().toLowerCase()
      const rate = (shipment.rates ?? []).find((each) => wanted(each.carrier) === wanted(request.carrier) && wanted(each.service) === wanted(request.service))
      if (!rate) {
        const offered = (shipment.rates ?? []).map((each) => `${each.carrier} ${each.service}`).join(', ') || 'none'
        throw new DeliveryProviderError(`EasyPost offers no ${request.carrier} ${request.service} for this parcel now (offered: ${offered}).`, 'refused', 'SHIPMENT.RATES.UNAVAILABLE')
      }
      const bought = await logged(journal, context.settings, 'buy', { id: shipment.id, rate: rate.id }, () => client.Shipment.buy(shipment.id, rate.id))
      if (!bought.postage_label) throw new DeliveryProviderError(`EasyPost answered the purchase of ${shipment.id} without a label.`, 'unknown')
      let label = bought
      if (request.labelFormat !== 'PNG') {
        // The label is bought: a failed conversion keeps the PNG (fetch it in another format later).
        try {
          label = await logged(journal, context.settings, 'convert', { id: shipment.id, format: request.labelFormat }, () => client.Shipment.convertLabelFormat(shipment.id, request.labelFormat))
        } catch {
          label = bought
        }
      }
      return purchasedLabel({ ...bought, postage_label: label.postage_label ?? bought.postage_label }, request.labelFormat, warnOf(context))
    },

    async recoverLabel(request, context, journal) {
      const client = await clientFor(context.settings, defaultBaseUrl)
      const shipment = await logged(journal, context.settings, 'retrieve', { id: request.externalId }, () => client.Shipment.retrieve(request.externalId))
      checkMode(shipment, context.settings)
      if (!shipment.postage_label) return { state: 'not-purchased' }
      return { state: 'purchased', label: purchasedLabel(shipment, request.labelFormat, warnOf(context)) }
    },

    async labelDocument(label, context, journal) {
      const client = await clientFor(context.settings, defaultBaseUrl)
      const converted = await logged(journal, context.settings, 'convert', { id: label.externalId, format: label.format }, () => client.Shipment.convertLabelFormat(label.externalId, label.format))
      const url = labelUrlIn(converted, label.format as LabelFormat)
      if (!url) throw new DeliveryProviderError(`EasyPost gave no ${label.format} label for ${label.externalId}.`, 'refused')
      return { url, format: label.format }
    },

    async services(context) {
      const client = await clientFor(context.settings, defaultBaseUrl)
      // Nothing is bought: no journal. A failure is classified as every other call's (429, 5xx, no answer).
      return servicesOfCarrierAccounts(await logged(null, context.settings, 'carrier accounts', {}, () => client.CarrierAccount.all()))
    },

    async voidLabel(label, context, journal) {
      const client = await clientFor(context.settings, defaultBaseUrl)
      const refunded = await logged(journal, context.settings, 'refund', { id: label.externalId }, () => client.Shipment.refund(label.externalId))
      const refundStatus = refunded.refund_status ?? 'submitted'
      if (refundStatus === 'rejected') throw new DeliveryProviderError('EasyPost rejected the refund (it may be asked again later).', 'refused')
      return { refundStatus }
    },
  }
}
