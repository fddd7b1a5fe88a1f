// A parcel's customs declaration as EasyPost's `customs_info` (shapes from the official client's types:
// CustomsInfo, CustomsItem; the incoterm is a shipment option), and the forms EasyPost returns with a bought
// international shipment, each checked on its own: one bad form never hides the good ones.
import type { CustomsInfo, LabelForm } from '../delivery-provider.js'

/**
 * An exact decimal as EasyPost's JSON number: the client's types say `number`, and a decimal of up to 15
 * significant digits survives the trip unchanged (JSON writes "23.25" for 23.25). One that would not (more
 * digits than a double holds) is sent as the string itself, which EasyPost reads the same way: never rounded.
 */
export function easyPostDecimal(value: string): number | string {
  const number = Number(value)
  if (!Number.isFinite(number)) return value
  const canonical = value.includes('.') ? value.replace(/\.?0+$/, '') : value
  return String(number) === canonical.replace(/^(-?)0+(?=\d)/, '$1') ? number : value
}

/** The declaration as EasyPost's `customs_info` (with `customs_items`), and the incoterm for the shipment's options. */
export function easyPostCustoms(customs: CustomsInfo): { customs_info: Record<string, unknown>; incoterm: string } {
  return {
    customs_info: {
      contents_type: customs.contentsType,
      // EasyPost requires an explanation for "other" only; an empty string is what its own client sends otherwise.
      contents_explanation: customs.contentsExplanation ?? '',
      customs_certify: customs.certify,
      customs_signer: customs.signer,
      non_delivery_option: customs.nonDeliveryOption,
      restriction_type: customs.restrictionType,
      restriction_comments: customs.restrictionComments,
      eel_pfc: customs.eelPfc,
      customs_items: customs.items.map((item) => ({
        description: item.description,
        quantity: item.quantity,
        // The line's total value and total weight (ounces), as EasyPost's customs item wants them.
        value: easyPostDecimal(item.value),
        weight: easyPostDecimal(item.weightOunces),
        hs_tariff_number: item.tariffNumber,
        origin_country: item.originCountry,
        code: item.sku,
        currency: customs.currency,
      })),
    },
    incoterm: customs.incoterm,
  }
}

/** What the attempt log keeps of a declaration: its shape and totals, never the signer's name. */
export function customsSummary(customs: CustomsInfo | undefined): Record<string, unknown> | undefined {
  if (!customs) return undefined
  return { contentsType: customs.contentsType, incoterm: customs.incoterm, currency: customs.currency, items: customs.items.length }
}

/** The longest form type and URL kept: a provider's answer is bounded before it is stored. */
const MAX_FORM_TYPE = 40
const MAX_FORM_URL = 2000
const MAX_FORMS = 20
const FORM_TYPE = /^[a-z0-9_]+$/

/** Why a form of the answer is dropped, or null when it is kept. */
function formProblem(form: unknown): string | null {
  if (!form || typeof form !== 'object') return 'not an object'
  const { form_type: type, form_url: url } = form as { form_type?: unknown; form_url?: unknown }
  if (typeof type !== 'string' || type.length === 0 || type.length > MAX_FORM_TYPE || !FORM_TYPE.test(type)) return 'its form_type is not a short name'
  if (typeof url !== 'string' || url.length > MAX_FORM_URL) return 'its form_url is missing or too long'
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'its form_url is not a URL'
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'its form_url is not http(s)'
  if (parsed.username !== '' || parsed.password !== '') return 'its form_url carries credentials'
  return null
}

/**
 * The forms of a bought shipment (`forms[]`), each checked on its own: a form whose type is not a short
 * name or whose URL is not a well-formed http(s) URL is dropped and reported through `dropped`; the
 * rest are kept, at most MAX_FORMS.
 */
export function formsOf(answer: unknown, dropped: (problem: string, index: number) => void): LabelForm[] {
  if (answer === undefined || answer === null) return []
  if (!Array.isArray(answer)) {
    dropped('forms is not a list', -1)
    return []
  }
  const kept: LabelForm[] = []
  for (const [index, form] of answer.slice(0, MAX_FORMS).entries()) {
    const problem = formProblem(form)
    if (problem !== null) {
      dropped(problem, index)
      continue
    }
    const { form_type: type, form_url: url } = form as { form_type: string; form_url: string }
    kept.push({ type, url })
  }
  if (answer.length > MAX_FORMS) dropped(`more than ${MAX_FORMS} forms; the rest are ignored`, MAX_FORMS)
  return kept
}
