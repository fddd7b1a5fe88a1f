// `fastify-shipments/testing`: a local stand-in for EasyPost's API, for tests and development only,
// never production. A host points its `easypost` integration's `apiBaseUrl` at the stand-in and tests its
// shop end to end (rates, labels, voids, customs forms, ScanForms, address verification) without a carrier
// account or the network. The shapes imitate EasyPost's, taken from its official client's types and
// recorded test-mode traffic; the error codes of refusals EasyPost documents without a code are the
// stand-in's own. Importing the package's main entry never loads this module.
import { listen } from './server.js'
import { createState, type StandInCarrierAccount, type StandInFault, type StandInOptions, type StandInRate } from './state.js'

export {
  DEFAULT_CARRIER_ACCOUNTS,
  DEFAULT_RATES,
  type StandInCall,
  type StandInCarrierAccount,
  type StandInFault,
  type StandInObject,
  type StandInOptions,
  type StandInRate,
  type StandInStats,
} from './state.js'

/**
 * Starts a local EasyPost stand-in on a free port (for tests and development, never production). It
 * answers EasyPost's shipment, carrier-account, address and ScanForm endpoints under `baseUrl` for the
 * key given, serves the form PDFs its objects name, records every call, and fails on demand (`fault`).
 * Call `close()` when done (in a tap test: `t.teardown(standIn.close)`).
 */
export async function startEasyPostStandIn(options: StandInOptions) {
  const state = createState(options)
  const server = await listen(state, options.host ?? '127.0.0.1')
  const { port } = server.address() as { port: number }
  const host = options.host ?? '127.0.0.1'
  return {
    /** The API's base URL, for the integration's `apiBaseUrl` setting (`http://127.0.0.1:<port>/v2`). */
    baseUrl: `http://${host.includes(':') ? `[${host}]` : host}:${port}/v2`,
    /** The shipments made, by EasyPost id (`shp_...`), as the stand-in answers them. */
    shipments: state.shipments,
    /** The ScanForms made, by id (`sf_...`). */
    scanForms: state.scanForms,
    /** The customs forms of bought international shipments, by id (`form_...`), each served as a PDF. */
    customsForms: state.customsForms,
    /** The Address endpoint: what it was sent to verify (`verified`), and odd answers to give next (`answerNext`). */
    addresses: state.addresses,
    /** Every call received, in order, authorized or not. */
    calls: state.calls,
    /** Counters: creates, buys, refunds, scanForms, rateLimited, formFetches, inFlight and maxInFlight. */
    stats: state.stats,
    /** The reference (the package's operation id) of every shipment bought, in the order bought. */
    boughtReferences: state.boughtReferences,
    /** Queues a fault for the next call of its step (`{ step: 'buy', kind: 'lose-answer' }`). */
    fault: (fault: StandInFault) => void state.faults.push(fault),
    /** Gives every `every`-th call of the fault's step this fault, until cleared. */
    faultEvery: (fault: StandInFault, every: number) => void state.periodic.push({ fault, every, seen: 0 }),
    /** Drops every queued and periodic fault. */
    clearFaults: () => {
      state.faults.length = 0
      state.periodic.length = 0
    },
    /** Every answer waits this long first (a slow provider). */
    setLatency: (ms: number) => {
      state.settings.latencyMs = ms
    },
    /** Forms added to every purchase's `forms` from now on (odd ones, to see them dropped); [] for none. */
    setExtraForms: (next: unknown[]) => {
      state.settings.extraForms = next
    },
    /** The rates every shipment is offered from now on. */
    setRates: (next: StandInRate[]) => {
      state.settings.rates = next
    },
    /** The key's carrier accounts from now on; anything but a list is answered as it is (an odd answer). */
    setCarrierAccounts: (next: StandInCarrierAccount[] | unknown) => {
      state.settings.carrierAccounts = next
    },
    /** Stops the server, dropping open connections. */
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** What `startEasyPostStandIn` gives. */
export type EasyPostStandIn = Awaited<ReturnType<typeof startEasyPostStandIn>>
