// The `documents` option: the shop on the slip, what the slip shows, fonts, the batch limit, the
// host's own renderer and how label files are fetched; checked once at registration.
import { readFileSync } from 'node:fs'
import type { PostalAddress } from '../order-store.js'
import type { DocumentFont } from './fonts.js'
import type { PackingSlipData } from './model.js'
import { DEFAULT_SHOW, type PackingSlipShow } from './model.js'
import type { PageSize } from './writer.js'
import { textProblem } from '../text.js'

/** A label to fetch: where the provider keeps it, and whose it is. */
export interface LabelFile {
  url: string
  /** The format the label was bought in (PDF, PNG, ZPL...). */
  format: string
  shipmentId: number
  parcelId: number
}

export interface DocumentsOptions {
  /**
   * The shop in the documents' header. Default: the name, company and address of `deliveries.shipFrom`,
   * when given. `logo`: a PNG or JPEG (bytes or a file path), drawn at most 150 x 50 pt.
   */
  shop?: { name?: string | undefined; address?: string[] | undefined; logo?: Uint8Array | string | undefined } | undefined
  /** What a packing slip shows; each part defaults to true. */
  show?: Partial<PackingSlipShow> | undefined
  /** The slip's title. Default 'Packing slip'. */
  title?: string | undefined
  /** Page size of slips and pick lists. Default 'A4'. */
  pageSize?: PageSize | undefined
  /** Fonts tried after the bundled DejaVu Sans, in order, for text it cannot draw (CJK, say). */
  fonts?: DocumentFont[] | undefined
  /**
   * A character no font can draw: 'replace' (the default) writes U+FFFD (a question mark in a diamond)
   * in its place and logs a warning; 'error' refuses the document with a 422 naming the character.
   */
  missingGlyphs?: 'replace' | 'error' | undefined
  /** The most shipments one batch document takes (1 to 1000). Default 200. */
  maxBatchSize?: number | undefined
  /**
   * The host's own packing slip: given the slip's data, it returns a whole PDF (any number of pages).
   * Batches and the labels document merge what it returns. Default: the package's layout.
   */
  renderPackingSlip?: ((slip: PackingSlipData) => Uint8Array | Promise<Uint8Array>) | undefined
  /**
   * Fetches a label's file from where the provider keeps it. Default: an HTTPS GET with `labelTimeoutMs`
   * and at most `labelMaxBytes`.
   */
  fetchLabel?: ((label: LabelFile) => Promise<Uint8Array>) | undefined
  /** How long the default fetch waits for one label, in ms. Default 10000. */
  labelTimeoutMs?: number | undefined
  /** The largest label file the default fetch takes. Default 5 MiB. */
  labelMaxBytes?: number | undefined
  /**
   * Lets the default fetch reach label files on loopback, private, link-local and other non-public
   * addresses (the rules of outbound webhooks): `true` for any, or a list of host names (as label URLs
   * write them, without the port) that may be. Default false: a label URL a provider names is never an
   * address inside the host's network, nor is any redirect it leads to.
   */
  allowPrivateAddresses?: boolean | readonly string[] | undefined
  /** The width of a label image (PNG, JPEG) on its page, in inches; its height follows. Default 4 (4 x 6 labels). */
  labelWidthInches?: number | undefined
}

export interface ResolvedDocumentsOptions {
  shop: { name: string; address: string[]; logo: Uint8Array | null }
  show: PackingSlipShow
  title: string
  pageSize: PageSize
  fonts: DocumentFont[]
  missingGlyphs: 'replace' | 'error'
  maxBatchSize: number
  renderPackingSlip: DocumentsOptions['renderPackingSlip'] | null
  fetchLabel: ((label: LabelFile) => Promise<Uint8Array>) | null
  labelTimeoutMs: number
  labelMaxBytes: number
  allowPrivateAddresses: boolean | readonly string[]
  labelWidthInches: number
}

/** Text under the package's rule (src/text.ts): no control characters or bidirectional overrides. */
const isText = (value: unknown, max = 500): value is string => typeof value === 'string' && textProblem(value, { maxLength: max }) === null
const isBytes = (value: unknown): value is Uint8Array => value instanceof Uint8Array
const isInteger = (value: unknown, min: number, max: number): value is number => typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max

/** The options with defaults; `fail` throws the plugin's InvalidOption error naming the option. */
export function resolveDocumentsOptions(raw: unknown, shipFrom: PostalAddress | undefined, fail: (option: string, reason: string) => never): ResolvedDocumentsOptions {
  if (raw !== undefined && (typeof raw !== 'object' || raw === null || Array.isArray(raw))) fail('documents', 'must be an object')
  const options = (raw ?? {}) as Record<string, unknown>
  const known = ['shop', 'show', 'title', 'pageSize', 'fonts', 'missingGlyphs', 'maxBatchSize', 'renderPackingSlip', 'fetchLabel', 'labelTimeoutMs', 'labelMaxBytes', 'allowPrivateAddresses', 'labelWidthInches']
  const unknown = Object.keys(options).find((key) => !known.includes(key))
  if (unknown) fail(`documents.${unknown}`, 'is not an option of documents')

  const shop = (options.shop ?? {}) as Record<string, unknown>
  if (typeof shop !== 'object' || shop === null) fail('documents.shop', 'must be an object')
  if (shop.name !== undefined && !isText(shop.name)) fail('documents.shop.name', 'must be a text of at most 500 characters, without control characters or bidirectional overrides')
  if (shop.address !== undefined && !(Array.isArray(shop.address) && shop.address.length <= 10 && shop.address.every((line) => isText(line)))) {
    fail('documents.shop.address', 'must be a list of at most 10 lines of text (at most 500 characters each, without control characters or bidirectional overrides)')
  }
  let logo: Uint8Array | null = null
  if (shop.logo !== undefined) {
    if (typeof shop.logo === 'string') {
      try {
        logo = readFileSync(shop.logo)
      } catch (error) {
        fail('documents.shop.logo', `cannot be read: ${(error as Error).message}`)
      }
    } else if (isBytes(shop.logo)) logo = shop.logo
    else fail('documents.shop.logo', 'must be the bytes of a PNG or JPEG, or a file path')
    const signature = Buffer.from(logo.subarray(0, 8)).toString('latin1')
    if (!signature.startsWith('\x89PNG') && !(logo[0] === 0xff && logo[1] === 0xd8)) fail('documents.shop.logo', 'must be a PNG or JPEG image')
  }
  const fromAddress = shipFrom
    ? [shipFrom.street1, shipFrom.street2, [shipFrom.postalCode, shipFrom.city].filter(Boolean).join(' '), shipFrom.state, shipFrom.country].filter((line): line is string => typeof line === 'string' && line !== '')
    : []

  const show = (options.show ?? {}) as Record<string, unknown>
  if (typeof show !== 'object' || show === null) fail('documents.show', 'must be an object')
  for (const [key, value] of Object.entries(show)) {
    if (!Object.hasOwn(DEFAULT_SHOW, key)) fail(`documents.show.${key}`, `is not a part of the slip (${Object.keys(DEFAULT_SHOW).join(', ')})`)
    if (typeof value !== 'boolean') fail(`documents.show.${key}`, 'must be true or false')
  }
  if (options.title !== undefined && !(isText(options.title, 100) && options.title.trim() !== '')) fail('documents.title', 'must be a text of 1 to 100 characters, without control characters or bidirectional overrides')
  if (options.pageSize !== undefined && options.pageSize !== 'A4' && options.pageSize !== 'LETTER') fail('documents.pageSize', "must be 'A4' or 'LETTER'")
  const fonts = options.fonts ?? []
  if (!Array.isArray(fonts)) fail('documents.fonts', 'must be a list of { regular, bold? } fonts')
  for (const [index, font] of (fonts as unknown[]).entries()) {
    const { regular, bold, regularFace, boldFace } = (font ?? {}) as Record<string, unknown>
    if (!(isBytes(regular) || typeof regular === 'string')) fail(`documents.fonts.${index}.regular`, 'must be the bytes of a TrueType or OpenType font, or a file path')
    if (bold !== undefined && !(isBytes(bold) || typeof bold === 'string')) fail(`documents.fonts.${index}.bold`, 'must be the bytes of a TrueType or OpenType font, or a file path')
    for (const [key, value] of Object.entries({ regularFace, boldFace })) {
      if (value !== undefined && !isText(value, 63)) fail(`documents.fonts.${index}.${key}`, 'must be the PostScript name of a face of the collection (at most 63 characters)')
    }
  }
  if (options.missingGlyphs !== undefined && options.missingGlyphs !== 'replace' && options.missingGlyphs !== 'error') fail('documents.missingGlyphs', "must be 'replace' or 'error'")
  if (options.maxBatchSize !== undefined && !isInteger(options.maxBatchSize, 1, 1000)) fail('documents.maxBatchSize', 'must be an integer from 1 to 1000')
  for (const hook of ['renderPackingSlip', 'fetchLabel'] as const) {
    if (options[hook] !== undefined && typeof options[hook] !== 'function') fail(`documents.${hook}`, 'must be a function')
  }
  if (options.labelTimeoutMs !== undefined && !isInteger(options.labelTimeoutMs, 100, 120_000)) fail('documents.labelTimeoutMs', 'must be an integer from 100 to 120000')
  if (options.labelMaxBytes !== undefined && !isInteger(options.labelMaxBytes, 1024, 100 * 1024 * 1024)) fail('documents.labelMaxBytes', 'must be an integer from 1024 to 104857600')
  const allowPrivate = options.allowPrivateAddresses
  if (allowPrivate !== undefined && typeof allowPrivate !== 'boolean' && !(Array.isArray(allowPrivate) && allowPrivate.length <= 100 && allowPrivate.every((host) => isText(host, 255) && host !== ''))) {
    fail('documents.allowPrivateAddresses', 'must be true, false or a list of host names')
  }
  const width = options.labelWidthInches
  if (width !== undefined && !(typeof width === 'number' && width >= 1 && width <= 12)) fail('documents.labelWidthInches', 'must be a number from 1 to 12')

  return {
    shop: {
      name: (shop.name as string | undefined) ?? shipFrom?.company ?? shipFrom?.name ?? '',
      address: (shop.address as string[] | undefined) ?? fromAddress,
      logo,
    },
    show: { ...DEFAULT_SHOW, ...(show as Partial<PackingSlipShow>) },
    title: (options.title as string | undefined) ?? 'Packing slip',
    pageSize: (options.pageSize as PageSize | undefined) ?? 'A4',
    fonts: fonts as DocumentFont[],
    missingGlyphs: (options.missingGlyphs as 'replace' | 'error' | undefined) ?? 'replace',
    maxBatchSize: (options.maxBatchSize as number | undefined) ?? 200,
    renderPackingSlip: (options.renderPackingSlip as DocumentsOptions['renderPackingSlip']) ?? null,
    fetchLabel: (options.fetchLabel as ResolvedDocumentsOptions['fetchLabel']) ?? null,
    labelTimeoutMs: (options.labelTimeoutMs as number | undefined) ?? 10_000,
    labelMaxBytes: (options.labelMaxBytes as number | undefined) ?? 5 * 1024 * 1024,
    allowPrivateAddresses: Array.isArray(allowPrivate) ? [...(allowPrivate as string[])] : allowPrivate === true,
    labelWidthInches: (width as number | undefined) ?? 4,
  }
}
