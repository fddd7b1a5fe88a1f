// Settings of the order exchange (spec 2.5): their schema, defaults and environment references.
import { Type, type Static } from '@sinclair/typebox'
import { typeBoxValue } from '../lazy.js'
import { MissingEnvironmentVariableError, parseBooleanSetting, resolveEnvironmentValue } from '../env.js'
import type { OrderFieldDefinition } from '../orders/reference-store.js'

const Text = Type.String()
const Flag = Type.Union([Type.Boolean(), Type.String()])

/** As hosts write them: every string may be an environment reference such as "$SHIPSTATION_PASSWORD". */
export const OrderExchangeOptionsSchema = Type.Object(
  {
    /** Basic-auth user name ShipStation sends. */
    username: Text,
    /** Basic-auth password ShipStation sends. */
    password: Text,
    /** Page Size for Orders; a non-numeric, zero or negative value means 25. */
    pageSize: Type.Optional(Type.Union([Type.Number(), Type.String()])),
    /** The order field (a dropdown) that the export's `store` parameter matches; null ignores `store`. */
    storeField: Type.Optional(Type.Union([Text, Type.Null()])),
    /** Fail the export (500) when an order of the page fails validation, instead of leaving it out. */
    failOnValidation: Type.Optional(Flag),
    /** Status Handle: the order status a ship notification applies. */
    shippedStatus: Type.Optional(Text),
    /** Where ship notifications write the tracking entry: a matrix field and its sub-fields. */
    trackingField: Type.Optional(
      Type.Object(
        {
          matrix: Type.Optional(Text),
          carrier: Type.Optional(Text),
          service: Type.Optional(Text),
          trackingNumber: Type.Optional(Text),
        },
        { additionalProperties: false },
      ),
    ),
    /** Also accept credentials as `SS-UserName` / `SS-Password` (query or headers). Default false. */
    acceptQueryCredentials: Type.Optional(Flag),
    /** Also move the order's open shipments to shipped on a ship notification. Default false. */
    updateShipments: Type.Optional(Flag),
    /** Recorded as the source integration on the history rows of those shipment moves. */
    integrationHandle: Type.Optional(Text),
    /** The site's origin for relative image URLs; default: the origin of the export request. */
    siteUrl: Type.Optional(Type.Union([Text, Type.Null()])),
    /** Largest ship notification body in bytes. Default 1 MiB. */
    bodyLimit: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
)

/** The `orderExchange` option as hosts write it (the schema above checks it): every string may be an environment reference. */
export interface OrderExchangeOptions {
  username: string
  password: string
  pageSize?: number | string | undefined
  storeField?: string | null | undefined
  failOnValidation?: boolean | string | undefined
  shippedStatus?: string | undefined
  trackingField?: { matrix?: string | undefined; carrier?: string | undefined; service?: string | undefined; trackingNumber?: string | undefined } | undefined
  acceptQueryCredentials?: boolean | string | undefined
  updateShipments?: boolean | string | undefined
  integrationHandle?: string | undefined
  siteUrl?: string | null | undefined
  bodyLimit?: number | undefined
}
// The interface admits everything the schema does (and an explicit undefined for what it leaves out).
true satisfies Static<typeof OrderExchangeOptionsSchema> extends OrderExchangeOptions ? true : false

export interface OrderExchangeSettings {
  username: string
  password: string
  pageSize: number
  storeField: string | null
  failOnValidation: boolean
  shippedStatus: string
  tracking: { matrix: string; carrier: string; service: string; trackingNumber: string }
  acceptQueryCredentials: boolean
  updateShipments: boolean
  integrationHandle: string
  siteUrl: string | null
  bodyLimit: number
}

export const DEFAULT_PAGE_SIZE = 25

/** Page Size for Orders: a positive integer, or 25 for anything else (spec 4.3 rule 5). */
export function pageSizeSetting(value: unknown): number {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value
  return typeof number === 'number' && Number.isFinite(number) && number >= 1 ? Math.floor(number) : DEFAULT_PAGE_SIZE
}

/**
 * Validates the settings and resolves their environment references. Throws `[option, reason]` for
 * the first problem. Blank field and status handles are accepted here: spec 7.3 answers them with a
 * 500 on the ship notification, and the plugin warns about them at startup.
 */
export function resolveOrderExchangeSettings(raw: unknown, env: NodeJS.ProcessEnv = process.env): OrderExchangeSettings {
  const firstError = typeBoxValue().Value.Errors(OrderExchangeOptionsSchema, raw).First()
  if (firstError) {
    throw new OrderExchangeSettingError(`orderExchange${firstError.path.replaceAll('/', '.')}`, firstError.message)
  }
  const options = raw as OrderExchangeOptions
  const resolve = (path: string, value: unknown): unknown => {
    try {
      return resolveEnvironmentValue(value, env)
    } catch (error) {
      // resolveEnvironmentValue throws one kind of error: an unset variable.
      throw new OrderExchangeSettingError(`orderExchange.${path}`, (error as MissingEnvironmentVariableError).message)
    }
  }
  const text = (path: string, value: string | null | undefined, fallback: string) => String(resolve(path, value ?? fallback)).trim()

  const settings: OrderExchangeSettings = {
    username: String(resolve('username', options.username)),
    password: String(resolve('password', options.password)),
    pageSize: pageSizeSetting(resolve('pageSize', options.pageSize)),
    storeField: text('storeField', options.storeField, '') || null,
    failOnValidation: parseBooleanSetting(resolve('failOnValidation', options.failOnValidation ?? false)),
    shippedStatus: text('shippedStatus', options.shippedStatus, 'shipped'),
    tracking: {
      matrix: text('trackingField.matrix', options.trackingField?.matrix, 'shippingInfo'),
      carrier: text('trackingField.carrier', options.trackingField?.carrier, 'carrier'),
      service: text('trackingField.service', options.trackingField?.service, 'service'),
      trackingNumber: text('trackingField.trackingNumber', options.trackingField?.trackingNumber, 'trackingNumber'),
    },
    acceptQueryCredentials: parseBooleanSetting(resolve('acceptQueryCredentials', options.acceptQueryCredentials ?? false)),
    updateShipments: parseBooleanSetting(resolve('updateShipments', options.updateShipments ?? false)),
    integrationHandle: text('integrationHandle', options.integrationHandle, 'shipstation') || 'shipstation',
    siteUrl: text('siteUrl', options.siteUrl, '') || null,
    bodyLimit: options.bodyLimit ?? 1_048_576,
  }
  if (settings.username === '') throw new OrderExchangeSettingError('orderExchange.username', 'must not be empty')
  if (settings.password.trim() === '') throw new OrderExchangeSettingError('orderExchange.password', 'must not be empty')
  if (settings.siteUrl !== null && !/^https?:\/\/[^/]+/i.test(settings.siteUrl)) {
    throw new OrderExchangeSettingError('orderExchange.siteUrl', 'must be an http(s) origin such as https://shop.example.com')
  }
  return settings
}

/** The blank handle settings a ship notification cannot work without (spec 7.3: a 500). */
export function blankShipNotifySettings(settings: OrderExchangeSettings): string[] {
  const handles: Record<string, string> = {
    shippedStatus: settings.shippedStatus,
    'trackingField.matrix': settings.tracking.matrix,
    'trackingField.carrier': settings.tracking.carrier,
    'trackingField.service': settings.tracking.service,
    'trackingField.trackingNumber': settings.tracking.trackingNumber,
  }
  return Object.entries(handles)
    .filter(([, value]) => value === '')
    .map(([name]) => name)
}

/**
 * Why ship notifications cannot store their tracking entry in the reference store's orders, one text per
 * tracking setting that names no matrix field (or no sub-field of it) among `orderFields`, each naming
 * the setting; empty when they can. Blank handles are left out (blankShipNotifySettings names them).
 */
export function missingTrackingFields(settings: OrderExchangeSettings, orderFields: readonly OrderFieldDefinition[]): string[] {
  const { matrix, ...subFields } = settings.tracking
  if (matrix === '') return []
  const field = orderFields.find((candidate) => candidate.handle === matrix)
  if (field?.type !== 'matrix') {
    return [`orderExchange.trackingField.matrix names "${matrix}", which is not a matrix field of orderFields`]
  }
  const declared = new Set(field.subFields ?? [])
  return Object.entries(subFields)
    .filter(([, handle]) => handle !== '' && !declared.has(handle))
    .map(([setting, handle]) => `orderExchange.trackingField.${setting} names "${handle}", which is not a sub-field of the matrix field "${matrix}" (orderFields)`)
}

export class OrderExchangeSettingError extends Error {
  constructor(
    readonly option: string,
    readonly reason: string,
  ) {
    super(`${option}: ${reason}`)
  }
}
