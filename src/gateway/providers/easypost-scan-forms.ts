// EasyPost's manifests: a ScanForm (`POST /v2/scan_forms` with the shipments' ids) of the day's labels for
// one carrier and one origin address, the form a USPS driver scans once instead of each parcel. EasyPost
// refuses a shipment already on a ScanForm and one that was refunded; its words are the refusal's.
import { DeliveryProviderError, type CreatedManifest, type DeliveryJournal, type DeliveryMethods, type ManifestRequest } from '../delivery-provider.js'
import type { ProviderContext } from '../providers.js'
import { answeredCall, classify, clientFor, type Answered, type EasyPostLabelSettings } from './easypost-labels.js'

/** The carriers whose labels EasyPost puts on a ScanForm here: USPS's SCAN form (other carriers need none). */
export const EASYPOST_MANIFEST_CARRIERS = ['USPS'] as const

/** What this module reads of EasyPost's ScanForm (the client's `IScanForm`); every field is checked, the answer is untrusted. */
function scanFormOf(answer: unknown): { id: string; status: string | null; message: string | null; formUrl: string | null; mode: string | null } {
  const form = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<string, unknown>
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null)
  const id = text(form.id)
  if (!id || !/^sf_[A-Za-z0-9]{1,64}$/.test(id)) throw new DeliveryProviderError('EasyPost answered the scan form without its id.', 'refused')
  const formUrl = text(form.form_url)
  return { id, status: text(form.status), message: text(form.message), formUrl: formUrl && /^https?:\/\//i.test(formUrl) ? formUrl : null, mode: text(form.mode) }
}

export function easyPostScanForms<Settings extends EasyPostLabelSettings>(defaultBaseUrl: string): Pick<DeliveryMethods<ProviderContext<Settings>>, 'createManifest' | 'manifestCarriers'> {
  return {
    manifestCarriers: EASYPOST_MANIFEST_CARRIERS,

    async createManifest(request: ManifestRequest, context: ProviderContext<Settings>, journal: DeliveryJournal): Promise<CreatedManifest> {
      const settings = context.settings
      const client = await clientFor(settings, defaultBaseUrl)
      const shipments = request.labels.map((label) => ({ id: label.externalId }))
      const logged = { shipments: shipments.map((each) => each.id), carrier: request.carrier }
      const started = performance.now()
      const answered: { answer: Answered | null } = { answer: null }
      let form: ReturnType<typeof scanFormOf>
      try {
        form = scanFormOf(await answeredCall.run(answered, () => client.ScanForm.create({ shipments })))
      } catch (error) {
        const failure = classify(error, 'scan form', answered.answer, settings)
        const { statusCode } = (error ?? {}) as { statusCode?: unknown }
        await journal.attempt({ step: 'scanForm', request: logged, response: { code: failure.providerCode }, statusCode: typeof statusCode === 'number' ? statusCode : (answered.answer?.status ?? null), error: failure.message, durationMs: performance.now() - started })
        throw failure
      }
      await journal.attempt({ step: 'scanForm', request: logged, response: { id: form.id, status: form.status, formUrl: form.formUrl }, statusCode: 200, error: null, durationMs: performance.now() - started })
      const expected = settings.mode ?? 'test'
      if (form.mode !== null && form.mode !== expected) throw new DeliveryProviderError(`EasyPost answered in ${form.mode} mode, but the integration is set to ${expected} mode: check the API key.`, 'refused')
      if (form.status === 'failed') throw new DeliveryProviderError(`EasyPost could not make the scan form: ${form.message ?? 'no reason given'}.`, 'refused')
      await journal.externalIdKnown(form.id)
      // "creating": EasyPost makes the form after answering; the form route says so until it is there.
      return { externalId: form.id, formUrl: form.formUrl }
    },
  }
}
