// EasyPost's address verification: an Address created with `verify: ["delivery"]` (`POST /v2/addresses`,
// the official client's `Address.create`) answers 201 with the address as the carrier writes it (upper
// case, ZIP+4, the secondary line folded into the first) and `verifications.delivery` = `{success, errors:
// [{code, field, message, suggestion}], details}`. `success: true` may come with errors (EasyPost's
// E.SECONDARY_INFORMATION.INVALID on a deliverable address): they are kept as problems, the verdict
// follows `success`. The answer is untrusted: a field that is not what the client's types say makes the
// verdict "unverified" with a problem naming it, never a crash and never a guess.
import { DeliveryProviderError, type AddressVerification, type DeliveryJournal, type DeliveryMethods, type PostalAddress } from '../delivery-provider.js'
import type { ProviderContext } from '../providers.js'
import { TEXT_LIMITS, textProblem } from '../../text.js'
import { answeredCall, classify, clientFor, type Answered, type EasyPostClient, type EasyPostLabelSettings } from './easypost-labels.js'

/** The part of the official client this module calls (its `Address` service). */
interface EasyPostAddressClient {
  Address: { create(params: Record<string, unknown>): Promise<unknown> }
}

type Problem = AddressVerification['problems'][number]

/** The postal fields a carrier corrects; name, company, phone and email stay the shop's own. */
const POSTAL_FIELDS = ['street1', 'street2', 'city', 'state', 'postalCode', 'country'] as const
const EASYPOST_FIELD: Record<(typeof POSTAL_FIELDS)[number], string> = { street1: 'street1', street2: 'street2', city: 'city', state: 'state', postalCode: 'zip', country: 'country' }

const MAX_PROBLEMS = 20

/** A short single-line text, or null for null/empty; undefined when the value is not one. */
function shortText(value: unknown, maxLength: number = TEXT_LIMITS.short): string | null | undefined {
  if (value === null || value === undefined || value === '') return null
  if (typeof value !== 'string' || textProblem(value, { maxLength }) !== null) return undefined
  return value.trim() === '' ? null : value.trim()
}

/** One of EasyPost's FieldErrors, read on its own; null when it is not one. */
function problemOf(value: unknown): Problem | null {
  if (typeof value !== 'object' || value === null) return null
  const error = value as Record<string, unknown>
  const code = shortText(error.code)
  const message = shortText(error.message, TEXT_LIMITS.statusMessage)
  const field = shortText(error.field)
  const suggestion = shortText(error.suggestion, TEXT_LIMITS.statusMessage)
  if (!code || message === undefined || field === undefined || suggestion === undefined) return null
  return { code, field, message: message ?? code, suggestion }
}

/** Differences that are not worth naming: letter case, spacing, and a ZIP+4 added to a five-digit ZIP code. */
function sameForDelivery(field: (typeof POSTAL_FIELDS)[number], sent: string | null, answered: string | null): boolean {
  const plain = (text: string | null) => (text ?? '').replace(/\s+/g, ' ').trim().toUpperCase()
  const [a, b] = [plain(sent), plain(answered)]
  if (a === b) return true
  return field === 'postalCode' && /^\d{5}$/.test(a) && new RegExp(`^${a}-\\d{4}$`).test(b)
}

const unverified = (code: string, message: string, problems: Problem[] = []): AddressVerification => ({
  verdict: 'unverified',
  corrected: null,
  problems: [{ code, field: null, message, suggestion: null }, ...problems].slice(0, MAX_PROBLEMS),
})

/**
 * EasyPost's answer as a verdict. Exported for the tests of odd answers: every field is checked on its
 * own, and one that is not what the client's types say makes the verdict "unverified" with a problem.
 */
export function verificationOf(answer: unknown, sent: PostalAddress): AddressVerification {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return unverified('ANSWER.UNREADABLE', 'EasyPost answered the address verification with something other than an address.')
  const address = answer as Record<string, unknown>
  const verifications = address.verifications as Record<string, unknown> | null | undefined
  const delivery = (typeof verifications === 'object' && verifications !== null ? verifications.delivery : undefined) as Record<string, unknown> | undefined
  if (typeof delivery !== 'object' || delivery === null) return unverified('VERIFICATION.MISSING', 'EasyPost gave no delivery verification for the address.')
  const rawErrors = Array.isArray(delivery.errors) ? delivery.errors.slice(0, MAX_PROBLEMS) : []
  const problems = rawErrors.map(problemOf).filter((each): each is Problem => each !== null)
  const dropped = rawErrors.length - problems.length
  if (dropped > 0) problems.push({ code: 'ANSWER.UNREADABLE', field: null, message: `${dropped} of EasyPost's verification errors could not be read (left out).`, suggestion: null })
  if (typeof delivery.success !== 'boolean') return unverified('VERIFICATION.UNREADABLE', 'EasyPost answered the delivery verification without saying whether it succeeded.', problems)
  if (!delivery.success) {
    if (problems.length === 0) problems.push({ code: 'ADDRESS.UNDELIVERABLE', field: null, message: 'The carrier cannot deliver to this address.', suggestion: null })
    return { verdict: 'undeliverable', corrected: null, problems }
  }
  const corrected: PostalAddress = { ...sent }
  const bad: string[] = []
  for (const field of POSTAL_FIELDS) {
    const value = shortText(address[EASYPOST_FIELD[field]])
    if (value === undefined) bad.push(EASYPOST_FIELD[field])
    else if (field === 'street1' || field === 'city' || field === 'postalCode' || field === 'country') {
      if (value === null) bad.push(EASYPOST_FIELD[field])
      else corrected[field] = value
    } else corrected[field] = value
  }
  if (bad.length > 0) return unverified('ANSWER.UNREADABLE', `EasyPost said the address is deliverable but answered it without a usable ${bad.join(', ')}.`, problems)
  const changed = POSTAL_FIELDS.some((field) => !sameForDelivery(field, sent[field] ?? null, corrected[field] ?? null))
  return { verdict: changed ? 'corrected' : 'deliverable', corrected, problems }
}

/** The address as EasyPost's Address takes it (`AddressCreateParameters`). */
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

export function easyPostAddresses<Settings extends EasyPostLabelSettings>(defaultBaseUrl: string): Pick<DeliveryMethods<ProviderContext<Settings>>, 'verifyAddress'> {
  return {
    async verifyAddress(address: PostalAddress, context: ProviderContext<Settings>, journal: DeliveryJournal): Promise<AddressVerification> {
      const settings = context.settings
      const client = (await clientFor(settings, defaultBaseUrl)) as EasyPostClient & Partial<EasyPostAddressClient>
      if (typeof client.Address?.create !== 'function') throw new DeliveryProviderError('The installed EasyPost client has no Address service: update @easypost/api.', 'refused')
      const started = performance.now()
      const answered: { answer: Answered | null } = { answer: null }
      // The attempt log keeps the country and the verdict, never the address itself.
      const logged = { country: address.country, verify: ['delivery'] }
      let answer: unknown
      try {
        answer = await answeredCall.run(answered, () => client.Address!.create({ ...easyPostAddress(address), verify: ['delivery'] }))
      } catch (error) {
        const failure = classify(error, 'address verification', answered.answer, settings)
        const { statusCode } = (error ?? {}) as { statusCode?: unknown }
        await journal.attempt({ step: 'verifyAddress', request: logged, response: { code: failure.providerCode }, statusCode: typeof statusCode === 'number' ? statusCode : (answered.answer?.status ?? null), error: failure.message, durationMs: performance.now() - started })
        throw failure
      }
      const mode = (answer as { mode?: unknown } | null)?.mode
      const expected = settings.mode ?? 'test'
      const verification =
        typeof mode === 'string' && mode !== expected
          ? unverified('MODE.MISMATCH', `EasyPost answered in ${mode} mode, but the integration is set to ${expected} mode: check the API key.`)
          : verificationOf(answer, address)
      await journal.attempt({ step: 'verifyAddress', request: logged, response: { verdict: verification.verdict, problems: verification.problems.map((each) => each.code) }, statusCode: 201, error: null, durationMs: performance.now() - started })
      return verification
    },
  }
}
