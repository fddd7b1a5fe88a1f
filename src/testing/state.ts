// The EasyPost stand-in's shapes and its shared state: what it was sent, what it made, what it was told
// to do next. Every handler of the stand-in (shipments.ts, scan-forms.ts, server.ts) works on one state
// object; nothing here imports the package, so a host's test can load it without the plugin.
import { randomBytes } from 'node:crypto'
import { addressStandIn } from './addresses.js'

/** A rate as the stand-in offers it; the fields are loose so a test can offer odd ones (`delivery_days: "soon"`). */
export interface StandInRate {
  carrier: unknown
  service: unknown
  rate: unknown
  currency?: unknown
  delivery_days?: unknown
}

/** A carrier account as the stand-in lists it; loose, so a test can list odd ones (`type: 7`). */
export interface StandInCarrierAccount {
  type: unknown
  readable?: unknown
}

/**
 * A fault for the next matching call: `step` is create, retrieve, buy, convert, refund, carrier-accounts,
 * scanForm or address.
 */
export type StandInFault =
  | { step: string; kind: 'error'; status: number; code: string; message: string; retryAfter?: string }
  /** EasyPost's 429 (nothing done), with a Retry-After header when given. */
  | { step: string; kind: 'rate-limit'; retryAfter?: string }
  /** Do the work, then drop the connection without an answer (a lost answer). */
  | { step: string; kind: 'lose-answer' }
  /** Answer after this delay (do the work first). */
  | { step: string; kind: 'delay'; ms: number }
  /** An answer whose body is not EasyPost's JSON (a proxy's HTML page): a 502 unless told. */
  | { step: string; kind: 'not-json'; status?: number; body?: string }
  /** Do the work, then answer with EasyPost's error (an earlier in-flight buy landed first: SHIPMENT.POSTAGE.EXISTS). */
  | { step: string; kind: 'error-after-work'; status: number; code: string; message: string }

/** One call the stand-in received, authorized or not. */
export interface StandInCall {
  method: string
  path: string
  step: string
  authorized: boolean
  body: unknown
  /** When the call came (epoch ms). */
  at: number
}

export interface StandInOptions {
  /** The key a client must send (HTTP Basic, the key as the user name, as EasyPost's client does). */
  apiKey: string
  /** The `mode` of every object made; `test` unless told. */
  mode?: 'test' | 'production' | undefined
  /** The rates every shipment is offered; DEFAULT_RATES unless told. */
  rates?: StandInRate[] | undefined
  /** The key's carrier accounts; DEFAULT_CARRIER_ACCOUNTS unless told. */
  carrierAccounts?: StandInCarrierAccount[] | undefined
  /** The interface to listen on; 127.0.0.1 unless told (the port is always a free one). */
  host?: string | undefined
}

/** The key's carrier accounts unless told: EasyPost's own USPS account and a UPS one (the default rates' carriers). */
export const DEFAULT_CARRIER_ACCOUNTS: StandInCarrierAccount[] = [
  { type: 'UspsAccount', readable: 'USPS' },
  { type: 'UpsAccount', readable: 'UPS' },
]

/** The rates every shipment is offered unless told: two USPS services and one UPS. */
export const DEFAULT_RATES: StandInRate[] = [
  { carrier: 'USPS', service: 'Priority', rate: '7.90', delivery_days: 2 },
  { carrier: 'USPS', service: 'GroundAdvantage', rate: '5.25', delivery_days: 5 },
  { carrier: 'UPS', service: 'Ground', rate: '11.03', delivery_days: 3 },
]

/** Counters a test reads: how many of each call did the work, and how many ran at once. */
export interface StandInStats {
  creates: number
  buys: number
  refunds: number
  scanForms: number
  rateLimited: number
  inFlight: number
  maxInFlight: number
  formFetches: number
}

export type StandInObject = Record<string, unknown>

/** Everything the stand-in keeps, shared by its handlers. */
export interface StandInState {
  apiKey: string
  mode: 'test' | 'production'
  shipments: Map<string, StandInObject>
  calls: StandInCall[]
  faults: StandInFault[]
  /** Faults that come back: every `every`-th call of the step gets a copy. */
  periodic: Array<{ fault: StandInFault; every: number; seen: number }>
  stats: StandInStats
  /** ScanForms by id, and the form each shipment is on (EasyPost puts a shipment on one form only). */
  scanForms: Map<string, StandInObject>
  formOfShipment: Map<string, string>
  /** Each purchase's reference, in order: a second buy of one shipment, or two shipments bought for one reference, show here. */
  boughtReferences: unknown[]
  /** Customs forms by id (served as PDFs). */
  customsForms: Map<string, StandInObject>
  addresses: ReturnType<typeof addressStandIn>
  /** What a test changes while the stand-in runs. */
  settings: { latencyMs: number; rates: StandInRate[]; extraForms: unknown[]; carrierAccounts: unknown }
}

export function createState(options: StandInOptions): StandInState {
  const mode = options.mode ?? 'test'
  return {
    apiKey: options.apiKey,
    mode,
    shipments: new Map(),
    calls: [],
    faults: [],
    periodic: [],
    stats: { creates: 0, buys: 0, refunds: 0, scanForms: 0, rateLimited: 0, inFlight: 0, maxInFlight: 0, formFetches: 0 },
    scanForms: new Map(),
    formOfShipment: new Map(),
    boughtReferences: [],
    customsForms: new Map(),
    addresses: addressStandIn(mode),
    settings: { latencyMs: 0, rates: options.rates ?? DEFAULT_RATES, extraForms: [], carrierAccounts: options.carrierAccounts ?? DEFAULT_CARRIER_ACCOUNTS },
  }
}

/** An answer to one call: its status, its JSON body and headers; `final` answers skip the faults that come after the work. */
export interface Answer {
  status: number
  body: unknown
  headers?: Record<string, string>
  final?: boolean
}

/** EasyPost's error envelope. */
export const refusal = (status: number, code: string, message: string, retryAfter?: string): Answer => ({
  status,
  body: { error: { code, message, errors: [] } },
  ...(retryAfter === undefined ? {} : { headers: { 'retry-after': retryAfter } }),
})

/** 32 random hex digits, as the suffix of EasyPost's ids (`shp_...`). */
export const hex = () => randomBytes(16).toString('hex')
