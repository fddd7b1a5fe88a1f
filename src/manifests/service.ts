// The day's manifest (`app.shipments.manifests`): a carrier's end-of-day form, such as USPS's SCAN form
// through EasyPost's ScanForm, of the labels bought through one integration for one carrier from the
// shop's ship-from address on one day (in the shop's time zone). Each label lands in one manifest at most
// (the store's unique key decides a race between instances); voided labels are left out; a carrier the
// provider makes no manifests for is said to need none. The form is not stored: its URL is, and
// `form(id)` fetches it under the outbound rules of the labels each time it is printed.
import type { DataLayer, EligibleLabelRow, ManifestRow } from '../db/data-layer.js'
import { ManifestErrors, ShipmentUpdateRejectedError, ShipmentValidationError } from '../errors.js'
import { DeliveryProviderError, providerFailureMessage, type DeliveryJournal } from '../gateway/delivery-provider.js'
import type { DeliveryLabelPort, DeliveryProviderAt } from '../deliveries/label-port.js'
import type { OutboxDispatcher } from '../outbox/dispatcher.js'
import type { PostalAddress } from '../order-store.js'
import { getHttp, HttpGetError } from '../http/outbound.js'
import { formatIsoWithOffset, instantOfWallTime, isRealWallTime, wallTimeAt } from '../time.js'
import type { FastifyBaseLogger } from 'fastify'

/** The most labels one manifest takes, and one eligible list shows (a USPS SCAN form holds far more than a shop ships a day through one integration). */
export const MAX_MANIFEST_LABELS = 1000
/** The form's size bound (a SCAN form of a thousand labels is a few pages). */
const FORM_MAX_BYTES = 10 * 1024 * 1024
const FORM_CONTENT_TYPES = ['application/pdf', 'application/octet-stream', 'binary/octet-stream']

export interface ManifestServiceDependencies {
  data: DataLayer
  /** The integrations that sell labels, with their providers (the deliveries' label port). */
  labels: Pick<DeliveryLabelPort, 'deliveryProvider'>
  /** Where parcels ship from (the deliveries' setting). */
  shipFrom: () => Promise<{ address: PostalAddress | null }>
  dispatcher: Pick<OutboxDispatcher, 'deliver'>
  logger: FastifyBaseLogger
  timeZone: string
  clock: () => number
  /** The form's fetch: the documents' outbound rules for labels (deadline, private addresses). */
  form: { timeoutMs: number; allowPrivateAddresses: boolean | readonly string[] }
}

/** A manifest as the API and the admin page show it (the form's URL stays inside: it is a capability). */
export interface Manifest {
  id: number
  integration: string
  carrier: string
  shipFrom: string
  state: ManifestRow['state']
  externalId: string | null
  parcelCount: number
  error: string | null
  userId: string | null
  /** Whether `GET /manifests/:id/form` has a form to print. */
  formAvailable: boolean
  dateCreated: string
  dateUpdated: string
}

export interface ManifestWithLabels extends Manifest {
  labels: Array<{ parcelId: number; operationId: string }>
}

/** One carrier's labels waiting for a manifest. */
export interface EligibleGroup {
  carrier: string
  shipFrom: string
  /** false: the provider makes no manifest for this carrier, so these labels need none (`reason` says why). */
  needsManifest: boolean
  reason: string | null
  count: number
  labels: Array<{ shipmentId: number; parcelId: number; operationId: string; trackingNumber: string; dateBought: string }>
}

export interface EligibleLabels {
  integration: string
  /** The day, YYYY-MM-DD in the shop's time zone. */
  date: string
  groups: EligibleGroup[]
  /** More than MAX_MANIFEST_LABELS labels were waiting: the first ones are listed. */
  truncated: boolean
}

export interface ManifestContext {
  userId?: string | null | undefined
}

/** The ship-from address as one line, the way the manifest list shows it. */
export const addressLine = (address: PostalAddress) =>
  [address.name, address.company, address.street1, address.street2, address.city, address.state, address.postalCode, address.country].filter((part) => typeof part === 'string' && part.trim() !== '').join(', ')

const pad = (value: number) => String(value).padStart(2, '0')

/** The day's bounds in the shop's time zone: a YYYY-MM-DD that is a real date, or today. */
function dayOf(date: unknown, timeZone: string, clock: () => number): { date: string; from: Date; to: Date } {
  let wall: { year: number; month: number; day: number }
  if (date === undefined || date === null || date === '') wall = wallTimeAt(clock(), timeZone)
  else {
    const match = typeof date === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(date) : null
    wall = match ? { year: Number(match[1]), month: Number(match[2]), day: Number(match[3]) } : { year: 0, month: 0, day: 0 }
    if (!match || !isRealWallTime({ ...wall, hour: 0, minute: 0, second: 0 })) throw new ShipmentValidationError({ date: ['must be a date written YYYY-MM-DD'] })
  }
  const from = instantOfWallTime({ ...wall, hour: 0, minute: 0, second: 0 }, timeZone)
  const next = new Date(Date.UTC(wall.year, wall.month - 1, wall.day + 1))
  const to = instantOfWallTime({ year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate(), hour: 0, minute: 0, second: 0 }, timeZone)
  return { date: `${wall.year}-${pad(wall.month)}-${pad(wall.day)}`, from: new Date(from), to: new Date(to) }
}

function present(row: ManifestRow, handles: Map<number, string>, timeZone: string): Manifest {
  return {
    id: row.id,
    integration: handles.get(row.integrationId) ?? String(row.integrationId),
    carrier: row.carrier,
    shipFrom: row.shipFrom,
    state: row.state,
    externalId: row.externalId,
    parcelCount: row.parcelCount,
    error: row.error,
    userId: row.userId,
    formAvailable: row.state === 'created' && row.formUrl !== null,
    dateCreated: formatIsoWithOffset(row.createdAt.getTime(), timeZone),
    dateUpdated: formatIsoWithOffset(row.updatedAt.getTime(), timeZone),
  }
}

const checkedCarrier = (carrier: unknown): string => {
  if (typeof carrier !== 'string' || carrier.trim() === '' || carrier.length > 100) throw new ShipmentValidationError({ carrier: ['is required: the carrier of the labels, such as USPS'] })
  return carrier.trim()
}

/** The provider's answer, checked: an id and an http(s) form URL or none. */
function checkedAnswer(answer: unknown): { externalId: string; formUrl: string | null } | null {
  const { externalId, formUrl } = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<string, unknown>
  if (typeof externalId !== 'string' || externalId === '' || externalId.length > 255) return null
  if (formUrl === null || formUrl === undefined) return { externalId, formUrl: null }
  if (typeof formUrl !== 'string' || formUrl.length > 4096 || !/^https?:\/\//i.test(formUrl)) return null
  return { externalId, formUrl }
}

/**
 * The form to print, a PDF, fetched from the provider's file host each time under the outbound rules
 * of labels (its URL is the provider's answer: no private address, bounded size and time). 404 for an
 * unknown manifest, 409 for one without a form, 502 when the file host fails.
 */
async function fetchForm(deps: Pick<ManifestServiceDependencies, 'data' | 'logger' | 'form'>, id: number): Promise<Buffer> {
  const { data, logger } = deps
  const row = await data.manifests.find(id)
  if (!row) throw new ManifestErrors.NotFound(id)
  if (row.state !== 'created') throw new ManifestErrors.FormNotReady(id, row.state === 'failed' ? 'it failed' : 'it is not made yet')
  if (!row.formUrl) throw new ManifestErrors.FormNotReady(id, 'the provider has not served its form yet')
  let bytes: Buffer
  try {
    bytes = await getHttp({
      url: row.formUrl,
      timeoutMs: deps.form.timeoutMs,
      maxBytes: FORM_MAX_BYTES,
      maxRedirects: 5,
      allowPrivateAddresses: deps.form.allowPrivateAddresses,
      acceptsContentType: (type) => type === null || FORM_CONTENT_TYPES.includes(type),
      what: "the form's host",
      file: 'the form',
    })
  } catch (error) {
    logger.warn({ err: error, manifestId: id }, 'A manifest form could not be fetched')
    throw new ManifestErrors.FormUnavailable(id, error instanceof HttpGetError ? error.message : 'an unexpected error (see the server log)')
  }
  if (!bytes.subarray(0, 1024).toString('latin1').includes('%PDF-')) throw new ManifestErrors.FormUnavailable(id, 'the file is not a PDF')
  return bytes
}

export function createManifestService(deps: ManifestServiceDependencies) {
  const { data, labels, dispatcher, logger, timeZone, clock } = deps

  /** Why a carrier's labels need no manifest through this integration, or null when they do. */
  function noManifestReason(at: DeliveryProviderAt, carrier: string): string | null {
    const methods = at.provider.deliveries
    if (!methods.createManifest) return `The integration ${at.row.handle} makes no manifests: its ${carrier} labels need none.`
    const carriers = methods.manifestCarriers
    if (carriers && !carriers.some((each) => each.toLowerCase() === carrier.toLowerCase())) {
      return `${carrier} labels need no manifest: the integration ${at.row.handle} makes manifests for ${carriers.join(', ')} only.`
    }
    return null
  }

  async function integrationNames(): Promise<Map<number, string>> {
    return new Map((await data.listIntegrations()).map((row) => [row.id, row.handle]))
  }

  /** The journal of a manifest's call: logged (a manifest has no attempt log of its own). */
  const journalFor = (manifestId: number): DeliveryJournal => ({
    externalIdKnown: async () => {},
    attempt: async (entry) => logger.info({ manifestId, step: entry.step, statusCode: entry.statusCode, error: entry.error, durationMs: Math.round(entry.durationMs) }, 'Manifest call to the provider'),
  })

  return {
    /** The day's labels (default today) of an integration that no manifest holds yet, by carrier and ship-from. */
    async eligible(query: { integration: string; date?: string | undefined }): Promise<EligibleLabels> {
      const at = await labels.deliveryProvider(query.integration)
      const day = dayOf(query.date, timeZone, clock)
      const { address } = await deps.shipFrom()
      const shipFrom = address ? addressLine(address) : ''
      const rows = await data.manifests.eligible({ integrationId: at.row.id, from: day.from, to: day.to, limit: MAX_MANIFEST_LABELS + 1 })
      const byCarrier = new Map<string, EligibleLabelRow[]>()
      for (const row of rows.slice(0, MAX_MANIFEST_LABELS)) {
        const key = row.carrier.toUpperCase()
        byCarrier.set(key, [...(byCarrier.get(key) ?? []), row])
      }
      const groups = [...byCarrier.values()].map((each): EligibleGroup => {
        const reason = noManifestReason(at, each[0]!.carrier)
        return {
          carrier: each[0]!.carrier,
          shipFrom,
          needsManifest: reason === null,
          reason,
          count: each.length,
          labels: each.map((row) => ({ shipmentId: row.shipmentId, parcelId: row.parcelId, operationId: row.operationId, trackingNumber: row.trackingNumber, dateBought: formatIsoWithOffset(row.createdAt.getTime(), timeZone) })),
        }
      })
      return { integration: at.row.handle, date: day.date, groups, truncated: rows.length > MAX_MANIFEST_LABELS }
    },

    /**
     * The manifest of the day's labels (default today) bought through `integration` for `carrier`: written
     * `pending` with its labels, then made by the provider. 422 before anything is written for bad input,
     * a carrier that needs no manifest, or no labels waiting; 409 when another manifest took them first;
     * the provider's refusal is recorded (state `failed`, its words) and answered 422.
     */
    async create(request: { integration: string; carrier: string; date?: string | undefined }, context: ManifestContext = {}): Promise<ManifestWithLabels> {
      const at = await labels.deliveryProvider(request.integration)
      const carrier = checkedCarrier(request.carrier)
      const day = dayOf(request.date, timeZone, clock)
      const reason = noManifestReason(at, carrier)
      if (reason) throw new ManifestErrors.NotNeeded(reason)
      const { address } = await deps.shipFrom()
      if (!address) throw new ShipmentUpdateRejectedError('No ship-from address is set (on the Boxes page, or the deliveries.shipFrom option): a manifest names one.')
      const waiting = await data.manifests.eligible({ integrationId: at.row.id, from: day.from, to: day.to, carrier, limit: MAX_MANIFEST_LABELS })
      if (waiting.length === 0) throw new ShipmentValidationError({ carrier: [`No ${carrier} labels bought through ${at.row.handle} on ${day.date} are waiting for a manifest.`] })
      const written = await data.manifests.create(
        { integrationId: at.row.id, carrier: waiting[0]!.carrier, shipFrom: addressLine(address), userId: context.userId ?? null },
        waiting.map((row) => ({ parcelId: row.parcelId, operationId: row.operationId })),
      )
      if (!written) throw new ManifestErrors.LabelsTaken(carrier)
      const { row, parcels } = written
      const byOperation = new Map(waiting.map((each) => [each.operationId, each]))
      const held = parcels.map((each) => byOperation.get(each.operationId)!)
      const fail = async (why: string) => {
        await data.manifests.markFailed(row.id, why)
        return new ManifestErrors.Refused(row.id, why)
      }
      let answer: unknown
      try {
        answer = await at.provider.deliveries.createManifest!({ labels: held.map((each) => ({ externalId: each.externalId, trackingNumber: each.trackingNumber })), carrier: row.carrier, from: address }, at.context, journalFor(row.id))
      } catch (error) {
        if (error instanceof DeliveryProviderError) throw await fail(providerFailureMessage(error))
        logger.error({ err: error, manifestId: row.id }, 'The provider failed while making a manifest')
        throw await fail('The provider failed with an unexpected error (see the server log).')
      }
      const made = checkedAnswer(answer)
      if (!made) throw await fail('The provider answered without a manifest id or with a form URL that is not http(s).')
      const handles = await integrationNames()
      const outcome = await data.manifests.markCreated(row.id, made, (created) => [
        {
          kind: 'event',
          name: 'manifestCreated',
          orderingKey: `manifest:${created.id}`,
          payload: {
            manifest: { id: created.id, integration: at.row.handle, carrier: created.carrier, shipFrom: created.shipFrom, externalId: created.externalId, parcelCount: created.parcelCount, dateCreated: formatIsoWithOffset(created.createdAt.getTime(), timeZone) },
            labels: held.map((each) => ({ shipmentId: each.shipmentId, parcelId: each.parcelId, trackingNumber: each.trackingNumber })),
            userId: created.userId,
          },
        },
      ])
      await dispatcher.deliver(outcome.messages)
      return { ...present(outcome.row, handles, timeZone), labels: parcels.map((each) => ({ parcelId: each.parcelId, operationId: each.operationId })) }
    },

    /**
     * The form to print, a PDF, fetched from the provider's file host each time under the outbound rules
     * of labels (its URL is the provider's answer: no private address, bounded size and time). 404 for an
     * unknown manifest, 409 for one without a form, 502 when the file host fails.
     */
    form: (id: number): Promise<Buffer> => fetchForm(deps, id),

    /** Manifests, newest first (`before`: the id the next page starts below). */
    async list(query: { limit?: number | undefined; before?: number | undefined } = {}): Promise<Manifest[]> {
      const limit = Math.min(Math.max(Math.trunc(query.limit ?? 50), 1), 200)
      const [rows, handles] = await Promise.all([data.manifests.list({ limit, beforeId: query.before }), integrationNames()])
      return rows.map((row) => present(row, handles, timeZone))
    },

    /** One manifest with its labels; null when there is none. */
    async get(id: number): Promise<ManifestWithLabels | null> {
      const row = await data.manifests.find(id)
      if (!row) return null
      const [parcels, handles] = await Promise.all([data.manifests.parcels(id), integrationNames()])
      return { ...present(row, handles, timeZone), labels: parcels.map((each) => ({ parcelId: each.parcelId, operationId: each.operationId })) }
    },

  }
}

export type ManifestService = ReturnType<typeof createManifestService>
