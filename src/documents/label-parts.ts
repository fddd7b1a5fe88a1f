// A labelled parcel's label as a part of the labels document: converted by the provider when it is not
// PDF, PNG or JPEG, and fetched under the rules of outbound webhooks (or by the host's fetchLabel); an
// international label's forms (CN22/CN23, the carrier's commercial invoice) fetched the same way.
import type { CustomsFormRow } from '../db/customs.js'
import { DocumentErrors } from '../errors.js'
import { getHttp, HttpGetError } from '../http/outbound.js'
import type { Parcel } from '../model/parcel.js'
import type { MergePart } from './merge.js'
import type { LabelFile } from './options.js'
import { loadDocumentEngine, type DocumentServiceContext } from './service-context.js'

/** Redirects a label fetch follows, each checked like the first URL (file stores redirect once or twice). */
const LABEL_MAX_REDIRECTS = 5
/** The types a label file may be served as (the bytes are checked as PDF, PNG or JPEG after). */
const LABEL_CONTENT_TYPES = ['application/pdf', 'image/png', 'image/jpeg', 'image/jpg', 'application/octet-stream', 'binary/octet-stream']
/** The types a ZPL label may be served as: file stores serve it as text or as bytes (the bytes are checked after). */
const ZPL_CONTENT_TYPES = ['text/plain', 'application/zpl', 'application/x-zpl', 'application/octet-stream', 'binary/octet-stream']

/** Whether the bytes are ZPL: a label format (^XA) that ends (^XZ); anything else (a PDF, an error page) is not. */
export function isZpl(bytes: Uint8Array): boolean {
  const text = Buffer.from(bytes).toString('latin1')
  const start = text.indexOf('^XA')
  return start >= 0 && text.indexOf('^XZ', start) > start && !text.includes('%PDF-')
}

export function createLabelParts(shared: DocumentServiceContext) {
  const { deps, options } = shared
  const { deliveries, logger } = deps

  /**
   * The default label fetch, under the rules of outbound webhooks: the URL is the provider's answer,
   * so it may not reach the host's own network (nor a redirect from it), and size, type and time are bounded.
   */
  async function fetchLabelFile(label: LabelFile, contentTypes = LABEL_CONTENT_TYPES): Promise<Uint8Array> {
    if (options.fetchLabel) return options.fetchLabel(label)
    return getHttp({
      url: label.url,
      timeoutMs: options.labelTimeoutMs,
      maxBytes: options.labelMaxBytes,
      maxRedirects: LABEL_MAX_REDIRECTS,
      allowPrivateAddresses: options.allowPrivateAddresses,
      acceptsContentType: (type) => type === null || contentTypes.includes(type),
      what: "the label's host",
      file: 'the label',
    })
  }

  /** A labelled parcel's label as a part to merge: fetched in its format, or as PDF when that is not PDF, PNG or JPEG. */
  async function labelPart(shipmentId: number, parcel: Parcel): Promise<MergePart> {
    const label = parcel.label!
    const { partKind } = await loadDocumentEngine()
    let url = label.url
    let format = label.format.toUpperCase()
    try {
      if (!['PDF', 'PNG', 'JPG', 'JPEG'].includes(format)) {
        // ZPL and EPL2 print on thermal printers only: the provider converts (EasyPost from PNG).
        ;({ url, format } = await deliveries.labelDocument(shipmentId, parcel.id, 'PDF'))
      }
      const bytes = await fetchLabelFile({ url, format, shipmentId, parcelId: parcel.id })
      const kind = partKind(bytes)
      if (kind === null) throw new Error('the file is not a PDF, PNG or JPEG')
      return kind === 'pdf' ? { kind, bytes } : { kind, bytes, widthInches: options.labelWidthInches }
    } catch (error) {
      // Whatever went wrong (the provider's conversion, the file's host, a deadline), the document names the parcel.
      logger.warn({ err: error, shipmentId, parcelId: parcel.id }, 'A label could not be fetched for the labels document')
      if (error instanceof HttpGetError && error.refused) throw new DocumentErrors.LabelRefused(parcel.id, `${error.message}; documents.allowPrivateAddresses allows such hosts`)
      throw new DocumentErrors.LabelUnavailable(parcel.id, (error as Error)?.message ?? String(error))
    }
  }

  /** A label bought as ZPL, its bytes as bought (for thermal printers: the print job's ZPL file). */
  async function labelZpl(shipmentId: number, parcel: Parcel): Promise<Uint8Array> {
    const label = parcel.label!
    try {
      const bytes = await fetchLabelFile({ url: label.url, format: label.format.toUpperCase(), shipmentId, parcelId: parcel.id }, ZPL_CONTENT_TYPES)
      if (!isZpl(bytes)) throw new Error('the file is not ZPL')
      return bytes
    } catch (error) {
      logger.warn({ err: error, shipmentId, parcelId: parcel.id }, 'A ZPL label could not be fetched for a print job')
      if (error instanceof HttpGetError && error.refused) throw new DocumentErrors.LabelRefused(parcel.id, `${error.message}; documents.allowPrivateAddresses allows such hosts`)
      throw new DocumentErrors.LabelUnavailable(parcel.id, (error as Error)?.message ?? String(error))
    }
  }

  /**
   * A form the provider returned with the parcel's label, as a part: its URL is the provider's answer,
   * fetched under the labels' rules (host, size, type, time; or by the host's fetchLabel, told its format
   * is PDF). A form that is not a PDF, PNG or JPEG, or cannot be fetched, fails the job naming it.
   */
  async function formPart(shipmentId: number, parcelId: number, form: CustomsFormRow): Promise<MergePart> {
    const { partKind } = await loadDocumentEngine()
    try {
      const bytes = await fetchLabelFile({ url: form.url, format: 'PDF', shipmentId, parcelId })
      const kind = partKind(bytes)
      if (kind === null) throw new Error('the file is not a PDF, PNG or JPEG')
      return kind === 'pdf' ? { kind, bytes } : { kind, bytes, widthInches: options.labelWidthInches }
    } catch (error) {
      logger.warn({ err: error, shipmentId, parcelId, form: form.type }, 'A customs form could not be fetched for a print job')
      const reason = (error as Error)?.message ?? String(error)
      throw new DocumentErrors.FormUnavailable(form.type, parcelId, error instanceof HttpGetError && error.refused ? `${reason}; documents.allowPrivateAddresses allows such hosts` : reason)
    }
  }

  return { labelPart, labelZpl, formPart }
}
