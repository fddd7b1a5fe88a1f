// The stand-in's ScanForms (`POST /v2/scan_forms`) and the files its objects name: a ScanForm's PDF and a
// customs form's PDF, as EasyPost's file host serves them (no key: the URL is the secret). The refusals
// are the ones EasyPost documents (a refunded shipment, one already on a form, mixed origins); their
// codes here are the stand-in's own.
import { textPdf } from './pdf.js'
import { hex, refusal, type Answer, type StandInObject, type StandInState } from './state.js'

/**
 * A ScanForm of the shipments named (`{scan_form: {shipments: [{id}]}}` as the official client sends it,
 * or `{shipments}`): refused, as EasyPost does, for an unknown shipment, one without postage, one
 * refunded, one already on a form, and for shipments from different origins.
 */
export function createScanForm(state: StandInState, body: StandInObject, origin: string): Answer {
  const params = ((body.scan_form ?? body) as { shipments?: Array<{ id?: unknown }> }).shipments
  if (!Array.isArray(params) || params.length === 0) return refusal(422, 'SCAN_FORM.SHIPMENTS.REQUIRED', 'A ScanForm needs at least one shipment.')
  const ids = params.map((each) => String(each?.id ?? ''))
  for (const id of ids) {
    const shipment = state.shipments.get(id)
    if (!shipment) return refusal(422, 'SCAN_FORM.SHIPMENT.INVALID', `Shipment ${id} could not be found.`)
    if (!shipment.postage_label) return refusal(422, 'SCAN_FORM.SHIPMENT.INVALID', `Shipment ${id} has no postage.`)
    if (shipment.refund_status) return refusal(422, 'SCAN_FORM.SHIPMENT.REFUNDED', `Shipment ${id} has been refunded and cannot be added to a ScanForm.`)
    const onForm = state.formOfShipment.get(id)
    if (onForm) return refusal(422, 'SCAN_FORM.SHIPMENT.DUPLICATE', `Shipment ${id} already belongs to ScanForm ${onForm}.`)
  }
  const origins = new Set(ids.map((id) => JSON.stringify({ ...(state.shipments.get(id)!.from_address as object), id: undefined })))
  if (origins.size > 1) return refusal(422, 'SCAN_FORM.ADDRESS.MISMATCH', 'All shipments of a ScanForm must have the same origin address.')
  const id = `sf_${hex()}`
  for (const each of ids) state.formOfShipment.set(each, id)
  state.stats.scanForms++
  const stamp = new Date().toISOString()
  const form = {
    id,
    object: 'ScanForm',
    mode: state.mode,
    status: 'created',
    message: null,
    address: state.shipments.get(ids[0]!)!.from_address,
    tracking_codes: ids.map((each) => state.shipments.get(each)!.tracking_code),
    form_url: `${origin}/files/scan_form/${id}.pdf`,
    form_file_type: null,
    batch_id: `batch_${hex()}`,
    created_at: stamp,
    updated_at: stamp,
  }
  state.scanForms.set(id, form)
  return { status: 200, body: form }
}

/** A file the stand-in serves, or null when the path names none (then it is an API call). */
export function servedFile(state: StandInState, method: string, path: string): { status: number; type: string; body: Buffer | string } | null {
  if (method !== 'GET') return null
  const notFound = { status: 404, type: 'text/plain', body: 'Not found' }
  const scanForm = /^\/files\/scan_form\/(sf_[0-9a-f]{32})\.pdf$/.exec(path)
  if (scanForm) {
    const form = state.scanForms.get(scanForm[1]!)
    if (!form) return notFound
    return { status: 200, type: 'application/pdf', body: textPdf(`USPS SCAN FORM ${String(form.id)}`, (form.tracking_codes as string[]).join('\n')) }
  }
  const customs = /^\/files\/form\/(form_[0-9a-f]{32})\.pdf$/.exec(path)
  if (customs) {
    const form = state.customsForms.get(customs[1]!)
    if (!form) return notFound
    state.stats.formFetches++
    const title = `${String(form.form_type).toUpperCase().replace('_', ' ')} ${String(form.shipment)}`
    return { status: 200, type: 'application/pdf', body: textPdf(title, `Tracking ${String(form.tracking_code)}`) }
  }
  return null
}
