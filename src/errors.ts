// Coded errors: every error the package raises toward a client has a code and a status of its own.
import createError from '@fastify/error'

/** Framework-level errors, rendered as `{name, message, code, status}` by the shipment API (spec 7.1). */
export const ShipmentsErrors = {
  Unauthorized: createError('SHIPMENTS_UNAUTHORIZED', 'Login required.', 401),
  Forbidden: createError<[permission: string]>('SHIPMENTS_FORBIDDEN', 'User is not permitted to perform this action (%s).', 403),
  ShipmentNotFound: createError<[id: number | string]>('SHIPMENTS_SHIPMENT_NOT_FOUND', 'Shipment %s not found.', 404),
  OrderNotFound: createError<[id: number | string]>('SHIPMENTS_ORDER_NOT_FOUND', 'Order %s not found.', 404),
  InvalidOption: createError<[option: string, reason: string]>('SHIPMENTS_INVALID_OPTION', 'Invalid option "%s": %s', 500),
} as const

/**
 * Errors of parcels, rates and labels, in the framework envelope of the shipment API. A carrier's own
 * refusal of a purchase is a 422 `{success: false, error}` (ShipmentUpdateRejectedError) instead.
 */
export const DeliveryErrors = {
  ParcelNotFound: createError<[id: number | string]>('SHIPMENTS_PARCEL_NOT_FOUND', 'Parcel %s not found on this shipment.', 404),
  QuoteNotFound: createError<[id: number | string]>('SHIPMENTS_QUOTE_NOT_FOUND', 'Rate quote %s not found for this parcel.', 404),
  BoxNotFound: createError<[id: number | string]>('SHIPMENTS_BOX_NOT_FOUND', 'Box %s not found.', 404),
  LabelExists: createError<[parcelId: number]>('SHIPMENTS_LABEL_EXISTS', 'Parcel %s has a label already: void it before buying another.', 409),
  LabelMissing: createError<[parcelId: number]>('SHIPMENTS_LABEL_MISSING', 'Parcel %s has no label.', 409),
  ParcelLocked: createError<[parcelId: number]>('SHIPMENTS_PARCEL_LABELLED', 'Parcel %s has a label: void it before changing or removing the parcel.', 409),
  ParcelHasLabelHistory: createError<[parcelId: number]>('SHIPMENTS_PARCEL_LABEL_HISTORY', 'Parcel %s had a label (bought, then voided): it is kept with its label operations for the record.', 409),
  PurchaseBusy: createError<[parcelId: number]>('SHIPMENTS_LABEL_PURCHASE_BUSY', 'A label purchase for parcel %s is under way elsewhere; try again shortly.', 409),
  QuoteExpired: createError<[id: number]>('SHIPMENTS_QUOTE_EXPIRED', 'Rate quote %s has expired: get rates again.', 409),
  QuoteChanged: createError<[id: number]>('SHIPMENTS_QUOTE_CHANGED', 'Rate quote %s was made for other parcel or address details: get rates again.', 409),
  PackingTooLarge: createError<[reason: string]>('SHIPMENTS_PACKING_TOO_LARGE', '%s', 422),
  SuggestionChanged: createError(
    'SHIPMENTS_SUGGESTION_CHANGED',
    "The shipment's items or parcels, its lines' measures or the boxes changed since this suggestion was made (or its parcels were altered): suggest parcels again.",
    409,
  ),
  PackingTimeout: createError<[budgetMs: number]>(
    'SHIPMENTS_PACKING_TIMEOUT',
    "Suggesting parcels took longer than %s ms and was stopped: add this shipment's parcels by hand, or disable the boxes it does not need.",
    422,
  ),
  OutcomeUnknown: createError<[parcelId: number, reason: string]>(
    'SHIPMENTS_LABEL_OUTCOME_UNKNOWN',
    'The label purchase for parcel %s has no known outcome: %s. Buying again looks the purchase up first and never buys twice.',
    503,
  ),
} as const

/** Errors of label batches, in the framework envelope of the shipment API. */
export const BatchErrors = {
  BatchNotFound: createError<[id: number | string]>('SHIPMENTS_LABEL_BATCH_NOT_FOUND', 'Label batch %s not found.', 404),
  BatchClosed: createError<[id: number, state: string, action: string]>('SHIPMENTS_LABEL_BATCH_CLOSED', 'Label batch %s is %s: it cannot be %s.', 409),
  NothingToPrint: createError<[id: number]>('SHIPMENTS_LABEL_BATCH_NOTHING_TO_PRINT', 'Label batch %s has bought no label yet: there is nothing to print.', 409),
} as const

/** The gateway's own refusals (spec 4.2), in the framework envelope; a provider's refusal keeps its error's code. */
export const GatewayErrors = {
  IntegrationMissing: createError('SHIPMENTS_GATEWAY_INTEGRATION_MISSING', 'Integration must be set.', 400),
  UnknownIntegration: createError<[handle: string]>('SHIPMENTS_GATEWAY_UNKNOWN_INTEGRATION', 'Unknown integration: %s', 404),
  IntegrationDisabled: createError<[handle: string]>('SHIPMENTS_GATEWAY_INTEGRATION_DISABLED', 'Integration %s is disabled.', 400),
  NoProvider: createError<[handle: string]>('SHIPMENTS_GATEWAY_NO_PROVIDER', 'Integration %s has no provider.', 400),
  /** Whatever else a provider threw: the sender learns no more (the log has it). */
  RequestFailed: createError('SHIPMENTS_GATEWAY_REQUEST_FAILED', 'Integration request processing failed.', 400),
} as const

/** Errors of returns, in the framework envelope of the shipment API. */
export const ReturnErrors = {
  ReturnNotFound: createError<[id: number | string]>('SHIPMENTS_RETURN_NOT_FOUND', 'Return %s not found.', 404),
  InvalidTransition: createError<[id: number, from: string, to: string]>('SHIPMENTS_RETURN_TRANSITION', 'Return %s is %s: it cannot move to %s.', 409),
  LabelExists: createError<[id: number]>('SHIPMENTS_RETURN_LABEL_EXISTS', 'Return %s has a label or a tracking number already.', 409),
  LabelBusy: createError<[id: number]>('SHIPMENTS_RETURN_LABEL_BUSY', 'A label purchase for return %s is under way elsewhere; try again shortly.', 409),
  AlreadyReceived: createError<[id: number]>('SHIPMENTS_RETURN_RECEIVED', 'Return %s was received already: what arrived is recorded once.', 409),
  LabelNotVoidable: createError<[id: number, state: string]>('SHIPMENTS_RETURN_LABEL_NOT_VOIDABLE', 'Return %s has no unused label to void (it is %s).', 409),
  LabelOutcomeUnknown: createError<[id: number, reason: string]>(
    'SHIPMENTS_RETURN_LABEL_OUTCOME_UNKNOWN',
    'The label purchase for return %s has no known outcome: %s. Buying again looks the purchase up first and never buys twice.',
    503,
  ),
} as const

/** Errors of the documents (packing slips, pick lists, merged labels), in the framework envelope of the shipment API. */
export const DocumentErrors = {
  UnsupportedCharacter: createError<[reason: string]>('SHIPMENTS_DOCUMENT_UNSUPPORTED_CHARACTER', '%s', 422),
  LabelUnavailable: createError<[parcelId: number, reason: string]>('SHIPMENTS_DOCUMENT_LABEL_UNAVAILABLE', 'The label of parcel %s could not be fetched: %s', 502),
  LabelRefused: createError<[parcelId: number, reason: string]>('SHIPMENTS_DOCUMENT_LABEL_REFUSED', 'The label of parcel %s was not fetched: %s', 502),
  RendererFailed: createError<[shipment: string, reason: string]>('SHIPMENTS_DOCUMENT_RENDERER_FAILED', 'The packing slip renderer failed for shipment %s: %s', 502),
  NoDeclaration: createError<[parcelId: number]>(
    'SHIPMENTS_DOCUMENT_NO_DECLARATION',
    'Parcel %s has no customs declaration: a commercial invoice is made for a parcel that crosses a border, from its saved declaration.',
    404,
  ),
  FormUnavailable: createError<[form: string, parcelId: number, reason: string]>('SHIPMENTS_DOCUMENT_FORM_UNAVAILABLE', 'The %s form of parcel %s could not be fetched: %s', 502),
  /** The PDF stack is a set of optional peer dependencies: a host that prints installs them (docs/documents.md). */
  PackagesMissing: createError<[packages: string]>('SHIPMENTS_DOCUMENT_PACKAGES_MISSING', 'PDF documents need packages this host has not installed: npm install %s', 501),
} as const

/** Errors of the shipping rules, in the framework envelope of the shipment API (a refused list is a per-field 422). */
export const RuleErrors = {
  ServicesUnavailable: createError<[integration: string, reason: string]>(
    'SHIPMENTS_RULES_SERVICES_UNAVAILABLE',
    'The services of the integration %s could not be listed, so the rules naming a carrier and service were not checked (nothing was saved): %s',
    502,
  ),
} as const

/**
 * The pack station's refusals, in the framework envelope, each message worded for a packer to read at a
 * glance (the page shows it as it is).
 */
export const PackStationErrors = {
  UnknownSlip: createError<[code: string]>('SHIPMENTS_PACK_UNKNOWN_SLIP', 'No shipment has the reference "%s": scan the barcode on the packing slip.', 404),
  UnknownShipment: createError<[id: number | string]>('SHIPMENTS_PACK_UNKNOWN_SHIPMENT', 'Shipment %s is not there any more: scan the next packing slip.', 404),
  NotPackable: createError<[reference: string, why: string]>('SHIPMENTS_PACK_NOT_PACKABLE', 'Do not pack shipment %s: %s.', 409),
  WrongItem: createError<[code: string, reference: string]>('SHIPMENTS_PACK_WRONG_ITEM', 'Wrong item: "%s" is not in shipment %s. Put it back.', 422),
  TooMany: createError<[name: string, needed: number]>('SHIPMENTS_PACK_TOO_MANY', 'One too many: %s, all %s packed already. Take it out.', 422),
  NotCounted: createError<[missing: string]>('SHIPMENTS_PACK_NOT_COUNTED', 'Not everything is packed yet: %s.', 422),
  NoRule: createError<[reason: string]>('SHIPMENTS_PACK_NO_RULE', 'No label was bought: %s.', 422),
  Busy: createError<[reference: string]>('SHIPMENTS_PACK_BUSY', 'Shipment %s is being finished elsewhere right now: wait a moment and press Buy and print again.', 409),
} as const

/** Errors of manifests (a carrier's end-of-day form), in the framework envelope of the shipment API. */
export const ManifestErrors = {
  NotFound: createError<[id: number | string]>('SHIPMENTS_MANIFEST_NOT_FOUND', 'Manifest %s not found.', 404),
  NotNeeded: createError<[reason: string]>('SHIPMENTS_MANIFEST_NOT_NEEDED', '%s', 422),
  LabelsTaken: createError<[carrier: string]>('SHIPMENTS_MANIFEST_LABELS_TAKEN', 'The %s labels went into another manifest meanwhile: nothing is left to manifest.', 409),
  Refused: createError<[id: number, reason: string]>('SHIPMENTS_MANIFEST_REFUSED', 'Manifest %s failed: %s', 422),
  FormNotReady: createError<[id: number, reason: string]>('SHIPMENTS_MANIFEST_FORM_NOT_READY', 'Manifest %s has no form to print: %s', 409),
  FormUnavailable: createError<[id: number, reason: string]>('SHIPMENTS_MANIFEST_FORM_UNAVAILABLE', 'The form of manifest %s could not be fetched: %s', 502),
} as const

/** Errors of a shipment's ship-to check (verified addresses), in the framework envelope of the shipment API. */
export const AddressErrors = {
  Undeliverable: createError<[reference: string, problems: string]>(
    'SHIPMENTS_ADDRESS_UNDELIVERABLE',
    'The carrier cannot deliver to the ship-to address of shipment %s: %s. Correct the address on the order, or choose "Ship as is" on the shipment.',
    422,
  ),
  NotChecked: createError<[reference: string]>('SHIPMENTS_ADDRESS_NOT_CHECKED', 'The ship-to address of shipment %s has not been verified as it is now: verify it first.', 409),
  NoCorrection: createError<[reference: string]>('SHIPMENTS_ADDRESS_NO_CORRECTION', 'The carrier suggested no correction of the ship-to address of shipment %s: there is nothing to accept.', 409),
} as const

/**
 * Errors of the order exchange (spec 7.3). The message is the short reason the client sees; the
 * full reason goes to the log.
 */
export const OrderExchangeErrors = {
  MissingAction: createError('SHIPMENTS_EXCHANGE_MISSING_ACTION', 'The action parameter is required (export or shipnotify).', 400),
  UnknownAction: createError('SHIPMENTS_EXCHANGE_UNKNOWN_ACTION', 'Unknown action: use export or shipnotify.', 400),
  InvalidDate: createError<[parameter: string]>('SHIPMENTS_EXCHANGE_INVALID_DATE', '%s is not a date.', 400),
  InvalidParameter: createError<[parameter: string, problem: string]>('SHIPMENTS_EXCHANGE_INVALID_PARAMETER', '%s %s', 400),
  UnreadableShipNotice: createError<[reason: string]>('SHIPMENTS_EXCHANGE_UNREADABLE_SHIPNOTICE', 'The ShipNotice XML body cannot be read: %s.', 400),
  Unauthorized: createError('SHIPMENTS_EXCHANGE_UNAUTHORIZED', 'Invalid username or password.', 401),
  OrderNotFound: createError<[orderNumber: string]>('SHIPMENTS_EXCHANGE_ORDER_NOT_FOUND', 'No order matches order_number %s.', 404),
  MissingOrderNumber: createError('SHIPMENTS_EXCHANGE_MISSING_ORDER_NUMBER', 'order_number is required.', 406),
  ShipNotifyFailed: createError('SHIPMENTS_EXCHANGE_SHIPNOTIFY_FAILED', 'The shipping notification could not be applied.', 500),
  ExportFailed: createError('SHIPMENTS_EXCHANGE_EXPORT_FAILED', 'The export failed: an order failed validation.', 500),
} as const

/** Per-field validation failure: 422 `{success: false, errors: {field: [message]}}`. */
export class ShipmentValidationError extends Error {
  readonly code: string = 'SHIPMENTS_VALIDATION_FAILED'
  readonly statusCode = 422
  /** `cause`: what the refusal came from (an over-allocation found under the order's lock, say). */
  constructor(
    readonly errors: Record<string, string[]>,
    options: { cause?: unknown } = {},
  ) {
    super(`Validation failed: ${Object.keys(errors).join(', ')}`, options)
    this.name = 'ShipmentValidationError'
  }
}

/**
 * An international parcel's customs declaration is incomplete: refused before any provider is called,
 * 422 `{success: false, errors: {"items[1].tariffNumber": [...]}, errorCode: "SHIPMENTS_CUSTOMS_INCOMPLETE"}`,
 * each line and field named. A per-field refusal like any other (a batch fails the item with these words).
 */
export class CustomsIncompleteError extends ShipmentValidationError {
  override readonly code: string = 'SHIPMENTS_CUSTOMS_INCOMPLETE'
  constructor(
    readonly parcelId: number,
    errors: Record<string, string[]>,
  ) {
    super(errors)
    this.message = `The customs declaration of parcel ${parcelId} is incomplete: ${Object.entries(errors)
      .map(([field, problems]) => `${field} ${problems.join('; ')}`)
      .join('; ')}`
    this.name = 'CustomsIncompleteError'
  }
}

/** Errors of customs declarations, in the framework envelope of the shipment API. */
export const CustomsErrors = {
  NotRequired: createError<[parcelId: number]>('SHIPMENTS_CUSTOMS_NOT_REQUIRED', 'Parcel %s ships within one country: it needs no customs declaration.', 409),
} as const

/** The service rejected an update while saving it: 422 `{success: false, error: message}`. */
export class ShipmentUpdateRejectedError extends Error {
  readonly code = 'SHIPMENTS_UPDATE_REJECTED'
  readonly statusCode = 422
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'ShipmentUpdateRejectedError'
  }
}

/**
 * The package's codes of error answers no coded error above raised: what Fastify refused before a route
 * ran (a body it could not read, too large, of a type the route does not take, a request its schema
 * refused) and a failure the package did not foresee. Every JSON error answer carries one code, in
 * `errorCode`: these, or the code of the error that was raised.
 */
export const RequestErrorCodes = {
  /** The request's schema refused it (the framework's 400, or the per-field 422). */
  validationFailed: 'SHIPMENTS_VALIDATION_FAILED',
  /** A body that could not be read: malformed JSON, an empty JSON body, a body that is not an object. */
  badRequest: 'SHIPMENTS_BAD_REQUEST',
  bodyTooLarge: 'SHIPMENTS_BODY_TOO_LARGE',
  unsupportedMediaType: 'SHIPMENTS_UNSUPPORTED_MEDIA_TYPE',
  /** A failure the package did not foresee (logged with its cause; the answer says no more). */
  internal: 'SHIPMENTS_INTERNAL_ERROR',
} as const

/** The `errorCode` of an answer to `error` with `status`: the package's own code, or one of RequestErrorCodes. */
export function errorCodeOf(error: { code?: unknown; validation?: unknown }, status: number): string {
  if (typeof error.code === 'string' && error.code.startsWith('SHIPMENTS_')) return error.code
  if (error.validation) return RequestErrorCodes.validationFailed
  if (status === 413) return RequestErrorCodes.bodyTooLarge
  if (status === 415) return RequestErrorCodes.unsupportedMediaType
  return status >= 500 ? RequestErrorCodes.internal : RequestErrorCodes.badRequest
}

/** The framework error envelope (spec 7.1, `code` an integer as the spec shows it) with the package's `errorCode`. */
export function frameworkErrorBody(status: number, message: string, errorCode: string) {
  return { name: HTTP_ERROR_NAMES[status] ?? 'Error', message, code: 0, status, errorCode }
}

/** The per-field 422 envelope (spec 7.1) with its `errorCode`. */
export function validationErrorBody(errors: Record<string, string[]>, errorCode: string = RequestErrorCodes.validationFailed) {
  return { success: false as const, errors, errorCode }
}

/** The service-level 422 envelope (spec 7.1) with its `errorCode`. */
export function serviceErrorBody(error: ShipmentUpdateRejectedError) {
  return { success: false as const, error: error.message, errorCode: error.code }
}

/** Error names of the platform's default JSON renderer, by status. */
export const HTTP_ERROR_NAMES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
}

/**
 * A statement the database refused or could not run, as the data layer passes it on: the driver's code
 * (a PostgreSQL SQLSTATE such as `23505`, or SQLite's such as `SQLITE_CONSTRAINT_UNIQUE`) and what
 * failed, never the statement's parameters (an integration's API key, a customer's address). Drivers'
 * own errors (Drizzle's "Failed query: ... params: ...") never leave the data layer.
 */
export class ShipmentsDatabaseError extends Error {
  /** The driver's code; `SHIPMENTS_DATABASE_ERROR` when the driver gave none. */
  readonly code: string
  /** The constraint that refused the statement, when the database names one (PostgreSQL). */
  readonly constraint: string | undefined
  constructor(message: string, options: { code: string | undefined; constraint?: string | undefined; cause?: unknown }) {
    super(message, { cause: options.cause })
    this.name = 'ShipmentsDatabaseError'
    this.code = options.code ?? 'SHIPMENTS_DATABASE_ERROR'
    this.constraint = options.constraint
  }

  /** A unique key refused a second row with the same key (a race another instance won). */
  get isUniqueViolation(): boolean {
    return this.code === '23505' || this.code === 'SQLITE_CONSTRAINT_UNIQUE' || this.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  }
}

/**
 * Raised by integration providers: its message goes to the caller of the gateway (400). Anything
 * else a provider throws reaches the caller only as "Integration request processing failed.".
 */
export class IntegrationError extends Error {
  readonly code = 'SHIPMENTS_INTEGRATION_ERROR'
  /** Whether sending the same request again may succeed (for outbound calls and retry queues). */
  readonly retryable: boolean
  constructor(message: string, options: { retryable?: boolean | undefined; cause?: unknown } = {}) {
    super(message, { cause: options.cause })
    this.name = 'IntegrationError'
    this.retryable = options.retryable ?? false
  }
}

/**
 * An integration's secret setting (a signing key, an API key) resolves empty or to an unset environment
 * variable: every request of the integration is refused rather than verified or signed with an empty
 * key. The message names the integration only; `setting` and `variable` are for the host's log.
 */
export class IntegrationSecretError extends IntegrationError {
  constructor(
    readonly integration: string,
    readonly setting: string,
    readonly variable: string | null,
  ) {
    super(`Integration ${integration} is not configured: one of its secret settings is empty or not set.`, { retryable: true })
    this.name = 'IntegrationSecretError'
  }
}

/** A webhook subscription could not be saved or found: the message names the offending field. */
export class WebhookSubscriptionError extends Error {
  readonly code = 'SHIPMENTS_WEBHOOK_SUBSCRIPTION'
  constructor(message: string) {
    super(message)
    this.name = 'WebhookSubscriptionError'
  }
}

/**
 * An integration could not be saved (or found): every problem, each naming its field. The message lists
 * them all (`handle: ...; settings.secret: ...`); `fields` holds them by field, for a form to show each
 * beside its input.
 */
export class IntegrationConfigError extends Error {
  readonly code = 'SHIPMENTS_INTEGRATION_CONFIG'
  /** The problems by field (`name`, `handle`, `enabled`, `providerId`, `pushOn`, `statusMap.<code>`, `settings.<key>`...). */
  readonly fields: Readonly<Record<string, readonly string[]>>
  /** `problems`: messages by field, or one `"<field>: <message>"` text. */
  constructor(problems: string | Record<string, string[]>) {
    const fields = typeof problems === 'string' ? fieldOfMessage(problems) : problems
    super(
      Object.entries(fields)
        .flatMap(([field, messages]) => messages.map((message) => `${field}: ${message}`))
        .join('; '),
    )
    this.name = 'IntegrationConfigError'
    this.fields = fields
  }
}

/** `"handle: is taken"` as `{ handle: ['is taken'] }`; a text naming no field stands under `integration`. */
function fieldOfMessage(message: string): Record<string, string[]> {
  const named = /^([A-Za-z][\w.-]*): (.*)$/s.exec(message)
  return named ? { [named[1]!]: [named[2]!] } : { integration: [message] }
}

/** A customer notification could not be saved or sent as a test: the message names the field. */
export class NotificationConfigError extends Error {
  readonly code = 'SHIPMENTS_NOTIFICATION_CONFIG'
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`)
    this.name = 'NotificationConfigError'
  }
}
