// The stand-in's shipment endpoints, shaped as EasyPost answers them (its official client's types and
// recorded test-mode traffic): create (with customs info across borders), buy, label conversion, refund,
// and the key's carrier accounts. Each handler takes the shared state and answers; server.ts routes the
// calls, checks the key and applies the faults.
import { hex, refusal, type Answer, type StandInCarrierAccount, type StandInObject, type StandInState } from './state.js'

/** An international shipment's missing customs info, refused as EasyPost's recorded missing-parameter error; null when it may be created. */
function customsRefusal(body: StandInObject): Answer | null {
  const params = (body.shipment ?? {}) as StandInObject
  const country = (address: unknown) => String((address as { country?: unknown } | undefined)?.country ?? 'US').toUpperCase()
  if (country(params.from_address) === country(params.to_address)) return null
  const customs = params.customs_info as { customs_items?: unknown } | undefined
  const missing = (field: string) => ({ status: 422, body: { error: { code: 'PARAMETER.REQUIRED', message: 'Missing required parameter.', errors: [{ field, message: 'cannot be blank' }] } } })
  if (!customs || typeof customs !== 'object') return missing('customs_info')
  if (!Array.isArray(customs.customs_items) || customs.customs_items.length === 0) return missing('customs_info.customs_items')
  return null
}

/** The customs info as EasyPost answers it: ids on the info and each item, an item's value a string. */
function storedCustoms(state: StandInState, customs: unknown): StandInObject | null {
  if (!customs || typeof customs !== 'object') return null
  const info = customs as StandInObject & { customs_items?: StandInObject[] }
  const stamp = new Date().toISOString()
  const common = { created_at: stamp, updated_at: stamp, mode: state.mode }
  return {
    id: `cstinfo_${hex()}`,
    object: 'CustomsInfo',
    ...common,
    declaration: null,
    restriction_comments: null,
    ...info,
    customs_items: (info.customs_items ?? []).map((item) => ({ id: `cstitem_${hex()}`, object: 'CustomsItem', ...common, code: null, currency: null, ...item, value: String(item.value) })),
  }
}

/** `POST /v2/shipments`: the shipment with its rates (or EasyPost's rate_error message when there are none). */
export function createShipment(state: StandInState, body: StandInObject): Answer {
  const refused = customsRefusal(body)
  if (refused) return refused
  const params = (body.shipment ?? {}) as StandInObject
  const id = `shp_${hex()}`
  const rates = state.settings.rates
  const shipment: StandInObject = {
    id,
    object: 'Shipment',
    mode: state.mode,
    reference: params.reference ?? null,
    to_address: { ...(params.to_address as object), id: `adr_${hex()}`, street1: String((params.to_address as { street1?: string })?.street1 ?? '').toUpperCase() },
    from_address: { ...(params.from_address as object), id: `adr_${hex()}` },
    parcel: { ...(params.parcel as object), id: `prcl_${hex()}`, object: 'Parcel' },
    options: params.options ?? {},
    is_return: params.is_return === true,
    customs_info: storedCustoms(state, params.customs_info),
    forms: [],
    rates: rates.map((rate) => ({
      id: `rate_${hex()}`,
      object: 'Rate',
      mode: state.mode,
      shipment_id: id,
      carrier: rate.carrier,
      service: rate.service,
      rate: rate.rate,
      currency: rate.currency ?? 'USD',
      delivery_days: rate.delivery_days ?? null,
      delivery_date: null,
      carrier_account_id: `ca_${hex()}`,
    })),
    messages: rates.length === 0 ? [{ carrier: 'USPS', type: 'rate_error', message: 'Unable to retrieve USPS rates for this parcel.' }] : [],
    selected_rate: null,
    postage_label: null,
    tracking_code: null,
    tracker: null,
    refund_status: null,
    fees: [],
    created_at: new Date().toISOString(),
  }
  state.shipments.set(id, shipment)
  state.stats.creates++
  return { status: 201, body: shipment }
}

/**
 * The forms of a bought international shipment: a commercial invoice, and a CN22 when the declared
 * value is at most 400 (USPS's limit for its CN22; a CN23 above), each served by the stand-in.
 */
function formsFor(state: StandInState, shipment: StandInObject, origin: string): unknown[] {
  const customs = shipment.customs_info as { customs_items?: Array<{ value?: unknown }> } | null
  if (!customs) return []
  const cents = (customs.customs_items ?? []).reduce((sum, item) => sum + Math.round(Number(item.value ?? 0) * 100), 0)
  const stamp = new Date().toISOString()
  const made = ['commercial_invoice', cents <= 40_000 ? 'cn22' : 'cn23'].map((type) => {
    const id = `form_${hex()}`
    const form = { object: 'Form', id, created_at: stamp, updated_at: stamp, mode: state.mode, form_type: type, form_url: `${origin}/files/form/${id}.pdf`, submitted_electronically: null }
    state.customsForms.set(id, { ...form, shipment: shipment.id, tracking_code: shipment.tracking_code })
    return form
  })
  return [...made, ...state.settings.extraForms]
}

/** `POST /v2/shipments/:id/buy`: the rate named bought once; a second buy is EasyPost's SHIPMENT.POSTAGE.EXISTS. */
export function buyShipment(state: StandInState, shipment: StandInObject, body: StandInObject, origin: string): Answer {
  if (shipment.postage_label) return refusal(422, 'SHIPMENT.POSTAGE.EXISTS', 'Shipment already has postage.')
  const rateId = (body.rate as { id?: string } | undefined)?.id
  const rate = (shipment.rates as Array<{ id: string; rate: unknown }>).find((each) => each.id === rateId)
  if (!rate) return refusal(422, 'SHIPMENT.POSTAGE.FAILURE', 'The rate given is not a rate of this shipment.')
  state.stats.buys++
  state.boughtReferences.push(shipment.reference)
  const trackingCode = `9400${String(state.stats.buys).padStart(18, '0')}`
  Object.assign(shipment, {
    selected_rate: rate,
    tracking_code: trackingCode,
    postage_label: {
      id: `pl_${hex()}`,
      object: 'PostageLabel',
      label_url: `https://easypost-files.example/files/postage_label/${String(shipment.id)}.png`,
      label_pdf_url: null,
      label_zpl_url: null,
      label_file_type: 'image/png',
    },
    tracker: { id: `trk_${hex()}`, object: 'Tracker', tracking_code: trackingCode, status: 'unknown', public_url: `https://track.easypost.com/djE6${trackingCode}` },
    fees: [{ object: 'Fee', type: 'PostageFee', amount: rate.rate, charged: true, refunded: false }],
  })
  shipment.forms = formsFor(state, shipment, origin)
  return { status: 200, body: shipment }
}

/** `GET /v2/shipments/:id/label?file_format=PDF|ZPL`: the label's URL in that format. */
export function convertLabel(shipment: StandInObject, format: string | null): Answer {
  const label = shipment.postage_label as StandInObject | null
  if (!label) return refusal(422, 'SHIPMENT.POSTAGE.REQUIRED', 'This shipment has no postage.')
  if (format === 'PDF') label.label_pdf_url = `https://easypost-files.example/files/postage_label/${String(shipment.id)}.pdf`
  else if (format === 'ZPL') label.label_zpl_url = `https://easypost-files.example/files/postage_label/${String(shipment.id)}.zpl`
  else return refusal(422, 'SHIPMENT.LABEL.FORMAT', `Unsupported file_format ${String(format)}.`)
  return { status: 200, body: shipment }
}

/** `POST /v2/shipments/:id/refund`: a bought shipment's refund submitted. */
export function refundShipment(state: StandInState, shipment: StandInObject): Answer {
  if (!shipment.postage_label) return refusal(422, 'SHIPMENT.REFUND.NOT_PURCHASED', 'Shipment has not been purchased.')
  state.stats.refunds++
  shipment.refund_status = 'submitted'
  return { status: 200, body: shipment }
}

/** `GET /v2/carrier_accounts`: EasyPost answers a bare JSON array (not an object with a `carrier_accounts` key). */
export function carrierAccounts(state: StandInState): Answer {
  const accounts = state.settings.carrierAccounts
  if (!Array.isArray(accounts)) return { status: 200, body: accounts, final: true }
  const stamp = new Date().toISOString()
  return {
    status: 200,
    body: accounts.map((account: StandInCarrierAccount) => ({
      id: `ca_${hex()}`,
      object: 'CarrierAccount',
      type: account.type,
      readable: account.readable ?? null,
      description: null,
      reference: null,
      billing_type: 'easypost',
      clone: false,
      fields: {},
      credentials: {},
      test_credentials: null,
      created_at: stamp,
      updated_at: stamp,
    })),
  }
}
