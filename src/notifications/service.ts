// Customer notifications: stored definitions (statuses, triggers, recipient, subject and body templates),
// and the outbox job that renders and sends one when a shipment reaches a status, the carrier has news or
// a return changes state. The job follows the committed event (`shipmentStatusChanged`, `carrierMilestone`,
// `estimateChanged`, the return events) durably (written with the event's delivered mark, with an id derived from
// the event's), so no notification is lost on a crash or queued twice; the host's `sendMail` sends it.
import type { FastifyBaseLogger } from 'fastify'
import type { Liquid } from 'liquidjs'
import type { DataLayer, NewOutboxMessage, NotificationRow, NotificationValues, OutboxRow } from '../db/data-layer.js'
import { NotificationConfigError } from '../errors.js'
import { onFirstUse } from '../lazy.js'
import { cachedRows, FOLLOW_UP_ROWS_MAX_AGE_MS } from '../outbox/cached-rows.js'
import { shortError, type JobHandler } from '../outbox/dispatcher.js'
import type { OrderStore } from '../orders/order-store.js'
import { isShipmentStatus, SHIPMENT_STATUSES, STATUS_LABELS, toShipment, type Shipment, type ShipmentStatus } from '../shipments/shipment.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import { CARRIER_MILESTONES, type Checkpoint } from '../shipments/checkpoints.js'
import { formatIsoWithOffset } from '../time.js'
import { RETURN_STATE_LABELS, toReturn, type Return, type ReturnState } from '../returns/return.js'
import type { TrackingLinks } from './tracking-links.js'
import { NOTIFICATION_TEMPLATES, type NotificationTemplateName } from './templates.js'

/** A message for the host's transport. */
export interface MailMessage {
  to: string[]
  subject: string
  html: string
  text: string
  /** The definition's language (a BCP 47 tag), or null. */
  language: string | null
  /** Stable per notification and status change: a transport can use it as the Message-ID, so a resend after a crash is recognisable. */
  messageId: string
  notificationId: number
  /** The shipment it is about; null for a notification on a return. */
  shipmentId: number | null
  /** The return it is about (a return trigger); null for a shipment's. */
  returnId: number | null
}

export interface NotificationsOptions {
  /** Sends one message; throw to have it retried (with backoff: 1 min, doubling, at most 6 h apart, 12 attempts). */
  sendMail: (message: MailMessage) => Promise<void>
}

/** The return events a notification can be sent on (a trigger is the event's name). */
export const RETURN_TRIGGERS = ['returnRequested', 'returnAuthorised', 'returnRejected', 'returnLabelSent', 'returnReceived', 'returnClosed'] as const
export type ReturnTrigger = (typeof RETURN_TRIGGERS)[number]

/**
 * What besides a status sends a notification: a carrier's scan reaching a milestone, an estimate moved
 * later, or a return's change of state.
 */
export const NOTIFICATION_TRIGGERS = [...CARRIER_MILESTONES, 'estimateLater', ...RETURN_TRIGGERS] as const
export type NotificationTrigger = (typeof NOTIFICATION_TRIGGERS)[number]

export const NOTIFICATION_RECIPIENTS = ['customer', 'addresses', 'customerAndAddresses'] as const
export type NotificationRecipient = (typeof NOTIFICATION_RECIPIENTS)[number]

export interface NotificationInput {
  name: string
  enabled?: boolean | undefined
  /** Shipment statuses whose reaching sends it (may be empty when `triggers` is not). */
  statuses: ShipmentStatus[]
  /** Carrier milestones (a new scan out for delivery, attempted, ...), `estimateLater` and return events that send it. */
  triggers?: NotificationTrigger[] | undefined
  /**
   * `customer`: the order's email (OrderSummary.email); `addresses`: the fixed list (staff notices);
   * `customerAndAddresses`: both, the addresses as further recipients.
   */
  recipient: NotificationRecipient
  addresses?: string[] | undefined
  /** Liquid templates: the subject and the text body are plain text, the HTML body escapes every output. */
  subject: string
  html: string
  text: string
  language?: string | null | undefined
}

export interface Notification extends Omit<NotificationInput, 'enabled' | 'addresses' | 'language' | 'triggers'> {
  id: number
  enabled: boolean
  triggers: NotificationTrigger[]
  addresses: string[]
  language: string | null
  dateCreated: string
  dateUpdated: string
}

export interface RenderedNotification {
  to: string[]
  subject: string
  html: string
  text: string
}

export const NOTIFICATION_JOB = 'customerNotification'

const isReturnTrigger = (name: string): name is ReturnTrigger => (RETURN_TRIGGERS as readonly string[]).includes(name)

/** What a notification is sent for: a status change, the carrier's news or a return's change (a trigger). */
interface NotifiedChange {
  from: string | null
  to: string
  message: string | null
  trigger?: NotificationTrigger | undefined
  checkpoint?: Checkpoint | undefined
  estimate?: { from: string | null; to: string | null } | undefined
}

// A deliberately plain address rule: one @, no spaces or angle brackets; the transport has the last word.
const EMAIL = /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/
const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/
const TEMPLATE_LIMIT = 20_000

/** The longest one template may render, in ms: the longest a hostile template holds the event loop. */
export const TEMPLATE_RENDER_LIMIT_MS = 50
/** The characters one template's filters and ranges may allocate (liquidjs `memoryLimit`). */
const TEMPLATE_MEMORY_LIMIT = 1_000_000

/**
 * A Liquid engine for templates that store admins write. It reads no files: `templates` is an empty
 * in-memory set (so no lookup reaches the file system), and `include`, `render` and `layout` are refused
 * when a template is parsed, with a message that says why. It runs no code of theirs, reads only own
 * properties, and the limits bound what one template may cost (characters parsed, time and memory).
 */
function templateEngine(Liquid: typeof import('liquidjs').Liquid, outputEscape: 'escape' | undefined): Liquid {
  const engine = new Liquid({
    templates: {},
    parseLimit: 100_000,
    // Checked between nodes only: one node may overrun the limit by its own cost.
    renderLimit: TEMPLATE_RENDER_LIMIT_MS,
    // Characters that filters and ranges may allocate. It also bounds that one node's cost: with 10
    // million, a single `(1..9999999)` held the event loop for a second before the render limit was
    // checked again; a mail's worth of text stays far below one million.
    memoryLimit: TEMPLATE_MEMORY_LIMIT,
    ownPropertyOnly: true,
    ...(outputEscape ? { outputEscape } : {}),
  })
  for (const tag of ['include', 'render', 'layout']) {
    engine.registerTag(tag, {
      parse() {
        throw new Error(`the "${tag}" tag is not available: notification templates cannot read other templates or files`)
      },
      render() {
        return ''
      },
    })
  }
  return engine
}

/** Renders after yielding to the event loop, so that requests waiting run between templates. */
async function renderInTurn(engine: Liquid, template: string, scope: object): Promise<string> {
  await new Promise<void>((resolve) => setImmediate(resolve))
  return engine.parseAndRender(template, scope)
}

export interface NotificationServiceDependencies {
  data: DataLayer
  orderStore: OrderStore
  logger: FastifyBaseLogger
  timeZone: string
  /** null: no transport configured; definitions can be kept, nothing is queued or sent. */
  options: NotificationsOptions | null
  trackingLinks: TrackingLinks | null
}

export type NotificationService = ReturnType<typeof createNotificationService>

export function createNotificationService(deps: NotificationServiceDependencies) {
  const { data, timeZone } = deps
  // liquidjs is imported with the first template checked or rendered, not with the package. A first
  // render compiles Liquid's own code paths (several ms): done in the load, before a customer's first
  // mail, which would spend part of its render limit on it.
  const engines = onFirstUse('liquidjs for the notification templates', async () => {
    const { Liquid } = await import('liquidjs')
    const html = templateEngine(Liquid, 'escape')
    const text = templateEngine(Liquid, undefined)
    for (const engine of [html, text]) await engine.parseAndRender('{% for item in items %}{{ item.name | upcase }}{% endfor %}{{ a | default: "b" }}', { items: [{ name: 'x' }] }).catch(() => undefined)
    return { html, text }
  })
  // A host with a transport renders mail: its engines load at registration (off the import), as before.
  if (deps.options !== null) void engines().catch(() => undefined)
  const enabledDefinitions = cachedRows(async () => (await data.notifications.list()).filter((row) => row.enabled), FOLLOW_UP_ROWS_MAX_AGE_MS)

  const present = (row: NotificationRow): Notification => ({
    id: row.id,
    name: row.name,
    enabled: row.enabled,
    statuses: row.statuses as ShipmentStatus[],
    triggers: row.triggers as NotificationTrigger[],
    recipient: row.recipient as NotificationRecipient,
    addresses: row.addresses,
    subject: row.subject,
    html: row.html,
    text: row.text,
    language: row.language,
    dateCreated: formatIsoWithOffset(row.createdAt.getTime(), timeZone),
    dateUpdated: formatIsoWithOffset(row.updatedAt.getTime(), timeZone),
  })

  /** Checks a definition before it is saved; the message names the field. */
  async function checkInput(input: NotificationInput): Promise<void> {
    const fail = (field: string, problem: string): never => {
      throw new NotificationConfigError(field, problem)
    }
    if (typeof input.name !== 'string' || input.name.trim() === '') fail('name', 'must not be empty')
    const nameProblem = textProblem(input.name.trim(), { maxLength: TEXT_LIMITS.short })
    if (nameProblem) fail('name', nameProblem)
    if (input.enabled !== undefined && typeof input.enabled !== 'boolean') fail('enabled', 'must be true or false')
    const triggers = input.triggers ?? []
    if (!Array.isArray(triggers)) fail('triggers', `must be a list of ${NOTIFICATION_TRIGGERS.join(', ')}`)
    for (const trigger of triggers) if (!(NOTIFICATION_TRIGGERS as readonly unknown[]).includes(trigger)) fail('triggers', `"${String(trigger)}" is not one of ${NOTIFICATION_TRIGGERS.join(', ')}`)
    if (!Array.isArray(input.statuses) || (input.statuses.length === 0 && triggers.length === 0)) fail('statuses', `must list at least one of ${SHIPMENT_STATUSES.join(', ')} (or give triggers)`)
    for (const status of input.statuses) if (!isShipmentStatus(status)) fail('statuses', `"${String(status)}" is not a shipment status`)
    if (!(NOTIFICATION_RECIPIENTS as readonly unknown[]).includes(input.recipient)) fail('recipient', 'must be "customer", "addresses" or "customerAndAddresses"')
    const addresses = input.addresses ?? []
    if (!Array.isArray(addresses) || addresses.length > 20) fail('addresses', 'must be a list of at most 20 addresses')
    for (const address of addresses) if (typeof address !== 'string' || address.length > 254 || !EMAIL.test(address)) fail('addresses', `"${String(address)}" is not an email address`)
    if (input.recipient !== 'customer' && addresses.length === 0) fail('addresses', `needs at least one address when the recipient is "${input.recipient}"`)
    if (input.language != null && (typeof input.language !== 'string' || !LANGUAGE.test(input.language))) fail('language', 'must be a language tag such as "en" or "de-CH"')
    const { html: htmlEngine, text: textEngine } = await engines()
    for (const [field, engine] of [['subject', textEngine], ['html', htmlEngine], ['text', textEngine]] as const) {
      const template = input[field]
      if (typeof template !== 'string' || template.trim() === '') fail(field, 'must not be empty')
      if (template.length > TEMPLATE_LIMIT) fail(field, `must be at most ${TEMPLATE_LIMIT} characters`)
      try {
        engine.parse(template)
      } catch (error) {
        fail(field, `is not a valid template: ${(error as Error).message.split('\n')[0]}`)
      }
    }
  }

  const stored = (input: NotificationInput): NotificationValues => ({
    name: input.name.trim(),
    enabled: input.enabled ?? true,
    statuses: [...new Set(input.statuses)],
    triggers: [...new Set(input.triggers ?? [])],
    recipient: input.recipient,
    addresses: input.addresses ?? [],
    subject: input.subject,
    html: input.html,
    text: input.text,
    language: input.language ?? null,
    updatedAt: new Date(),
  })

  async function requireRow(id: number): Promise<NotificationRow> {
    const row = Number.isSafeInteger(id) ? await data.notifications.find(id) : undefined
    if (!row) throw new NotificationConfigError('id', `no notification ${id}`)
    return row
  }

  /** What a template sees: the shipment, its order and items, the tracking link, the status change or the carrier's news. */
  async function shipmentScope(shipment: Shipment, change: NotifiedChange) {
    const order = await deps.orderStore.findOrder(shipment.orderId)
    const trackingPage = deps.trackingLinks ? await deps.trackingLinks.url(shipment.id) : null
    return {
      shipment: { ...shipment, statusLabel: STATUS_LABELS[shipment.status] },
      order: order ? { reference: order.reference, statusHandle: order.statusHandle, email: order.email ?? null } : null,
      items: shipment.items,
      trackingLink: trackingPage ?? shipment.trackingUrl,
      trackingPage,
      carrierTrackingUrl: shipment.trackingUrl,
      fromStatus: change.from,
      toStatus: change.to,
      fromStatusLabel: change.from && isShipmentStatus(change.from) ? STATUS_LABELS[change.from] : null,
      toStatusLabel: isShipmentStatus(change.to) ? STATUS_LABELS[change.to] : change.to,
      message: change.message,
      // The carrier's news, for notifications sent on a trigger: null for a status change.
      trigger: change.trigger ?? null,
      checkpoint: change.checkpoint ?? null,
      estimate: change.estimate ?? null,
      estimatedDelivery: shipment.estimatedDelivery,
    }
  }

  /**
   * What a template sent on a return's change sees: the return (its lines with the order lines' names),
   * its order, the change. `shipment` is absent: a return belongs to the order, not to one shipment.
   */
  async function returnScope(entry: Return, change: NotifiedChange) {
    const [order, orderLines] = await Promise.all([deps.orderStore.findOrder(entry.orderId), deps.orderStore.orderLines?.(entry.orderId) ?? null])
    const lines = entry.lines.map((line) => {
      const orderLine = orderLines?.find((candidate) => candidate.id === line.lineItemId)
      return { ...line, name: orderLine?.name ?? null, sku: orderLine?.sku ?? null }
    })
    const stateLabel = (state: string | null) => (state !== null && Object.hasOwn(RETURN_STATE_LABELS, state) ? RETURN_STATE_LABELS[state as ReturnState] : state)
    return {
      return: {
        id: entry.id,
        reference: entry.reference,
        state: entry.state,
        stateLabel: stateLabel(entry.state),
        message: entry.stateMessage,
        lines,
        trackingNumber: entry.trackingNumber,
        trackingUrl: entry.trackingUrl,
        carrier: entry.carrier,
        service: entry.service,
        labelUrl: entry.label?.url ?? null,
        // The return's own page beside the tracking page (its state, timeline and label), when it is mounted.
        pageUrl: deps.trackingLinks ? deps.trackingLinks.returnUrl(entry.id) : null,
        dateCreated: entry.dateCreated,
        dateReceived: entry.dateReceived,
      },
      order: order ? { reference: order.reference, statusHandle: order.statusHandle, email: order.email ?? null } : null,
      items: lines,
      trackingLink: entry.trackingUrl,
      fromState: change.from,
      toState: change.to,
      fromStateLabel: stateLabel(change.from),
      toStateLabel: stateLabel(change.to),
      message: change.message,
      trigger: change.trigger ?? null,
    }
  }

  async function render(row: NotificationRow, scope: { order: { email: string | null } | null }): Promise<RenderedNotification> {
    const email = scope.order?.email
    const customer = email && EMAIL.test(email) ? [email] : []
    const to = row.recipient === 'customer' ? customer : row.recipient === 'addresses' ? row.addresses : [...new Set([...customer, ...row.addresses])]
    // One template at a time, each in a turn of the event loop of its own: Liquid renders synchronously,
    // so three together would hold every other request of the host for three render limits.
    const { html: htmlEngine, text: textEngine } = await engines()
    const subject = await renderInTurn(textEngine, row.subject, scope)
    const html = await renderInTurn(htmlEngine, row.html, scope)
    const text = await renderInTurn(textEngine, row.text, scope)
    // A subject is one line: line breaks from a template or a value would start new mail headers.
    return { to, subject: subject.replace(/[\r\n]+/g, ' ').trim().slice(0, 998), html, text }
  }

  /** The trigger an event of the carrier's news is, or null. */
  function triggerOf(event: OutboxRow): { trigger: NotificationTrigger; shipment: Shipment; change: NotifiedChange } | null {
    if (event.name === 'carrierMilestone') {
      const { shipment, milestone, checkpoint } = event.payload as { shipment: Shipment; milestone: NotificationTrigger; checkpoint: Checkpoint }
      return { trigger: milestone, shipment, change: { from: null, to: shipment.status, message: checkpoint.message, trigger: milestone, checkpoint } }
    }
    if (event.name === 'estimateChanged' && (event.payload as { movedLater?: unknown }).movedLater === true) {
      const { shipment, from, to } = event.payload as { shipment: Shipment; from: string | null; to: string | null }
      return { trigger: 'estimateLater', shipment, change: { from: null, to: shipment.status, message: null, trigger: 'estimateLater', estimate: { from, to } } }
    }
    return null
  }

  /**
   * The jobs a batch of delivered events causes: one per enabled definition of the status reached, and
   * one per enabled definition of a carrier milestone or a later estimate.
   */
  async function notificationsFor(events: OutboxRow[]): Promise<NewOutboxMessage[]> {
    if (!deps.options) return []
    const changes = events.filter((event) => event.name === 'shipmentStatusChanged')
    const news = events.flatMap((event) => {
      const found = triggerOf(event)
      return found ? [{ event, ...found }] : []
    })
    const returnChanges = events.filter((event) => isReturnTrigger(event.name))
    if (changes.length === 0 && news.length === 0 && returnChanges.length === 0) return []
    const definitions = await enabledDefinitions.get()
    /**
     * One job per enabled definition `wanted` picks, each on its own ordering key: a mail failing for
     * hours holds up nothing but this notification of this shipment (or return).
     */
    const jobsFor = (event: OutboxRow, subject: string, wanted: (definition: (typeof definitions)[number]) => boolean, payload: Record<string, unknown>) =>
      definitions.filter(wanted).map(
        (definition): NewOutboxMessage => ({
          kind: 'job',
          name: NOTIFICATION_JOB,
          messageId: `${event.messageId}:notification:${definition.id}`,
          orderingKey: `notification:${definition.id}:${subject}`,
          payload: { notificationId: definition.id, ...payload, eventId: event.messageId },
        }),
      )
    return [
      ...returnChanges.flatMap((event) => {
        const { return: entry, from, to, message } = event.payload as { return: Return; from: string | null; to: string; message: string | null }
        const trigger = event.name as ReturnTrigger
        return jobsFor(event, `return:${entry.id}`, (definition) => definition.triggers.includes(trigger), { returnId: entry.id, from, to, message, trigger })
      }),
      ...news.flatMap(({ event, trigger, shipment, change }) =>
        jobsFor(event, `shipment:${shipment.id}`, (definition) => definition.triggers.includes(trigger), { shipmentId: shipment.id, ...change }),
      ),
      ...changes.flatMap((event) => {
        const { shipment, from, to, message } = event.payload as { shipment: Shipment; from: string; to: string; message: string | null }
        return jobsFor(event, `shipment:${shipment.id}`, (definition) => definition.statuses.includes(to), { shipmentId: shipment.id, from, to, message })
      }),
    ]
  }

  const notificationJob: JobHandler = {
    retryDelayMs: (attempt) => (attempt > 11 ? null : Math.min(60_000 * 2 ** (attempt - 1), 6 * 60 * 60 * 1000)),
    async run(job) {
      // A job on a return carries `returnId` in place of `shipmentId`.
      const { notificationId, shipmentId, returnId, from, to, message, trigger, checkpoint, estimate } = job.payload as unknown as { notificationId: number; shipmentId?: number; returnId?: number } & NotifiedChange
      const [definition, row, returnRow] = await Promise.all([
        data.notifications.find(notificationId),
        returnId === undefined ? data.findShipment(shipmentId!) : undefined,
        returnId === undefined ? undefined : data.returns.find(returnId),
      ])
      // A definition deleted or disabled since, or its shipment or return gone: nothing to send, and nothing to retry.
      if (!definition) return { state: 'skipped', reason: 'the notification was deleted before it was sent.' }
      if (!definition.enabled) return { state: 'skipped', reason: 'the notification was disabled before it was sent.' }
      if (returnId === undefined ? !row : !returnRow) return { state: 'skipped', reason: `the ${returnId === undefined ? 'shipment' : 'return'} was deleted before it was sent.` }
      if (!deps.options) return { state: 'skipped', reason: 'no mail transport is configured (notifications.sendMail).' }
      const change: NotifiedChange = { from, to, message, trigger, checkpoint, estimate }
      let rendered: RenderedNotification
      try {
        rendered = await render(definition, returnRow ? await returnScope(toReturn(returnRow, timeZone), change) : await shipmentScope(toShipment(row!, timeZone), change))
      } catch (error) {
        // Out of time may be the machine's load, not the template: tried again later (a hostile
        // template costs its limit once per attempt). Every other render error is the template's own.
        const outOfTime = /render limit exceeded/.test(shortError(error))
        return { state: outOfTime ? 'retry' : 'failed', error: `The template could not be rendered: ${shortError(error)}` }
      }
      if (rendered.to.length === 0) return { state: 'failed', error: 'No recipient: the order has no valid customer email.' }
      try {
        await deps.options.sendMail({ ...rendered, language: definition.language, messageId: `<${job.messageId}@fastify-shipments>`, notificationId, shipmentId: shipmentId ?? null, returnId: returnId ?? null })
      } catch (error) {
        deps.logger.warn({ err: error, notificationId, shipmentId, returnId }, 'Sending a customer notification failed; it will be retried')
        return { state: 'retry', error: shortError(error) }
      }
      return { state: 'done' }
    },
  }

  return {
    notificationsFor,
    notificationJob,
    /** Whether a transport is configured (`notifications.sendMail`). */
    canSend: deps.options !== null,

    async list(): Promise<Notification[]> {
      return (await data.notifications.list()).map(present)
    },

    async get(id: number): Promise<Notification | null> {
      const row = Number.isSafeInteger(id) ? await data.notifications.find(id) : undefined
      return row ? present(row) : null
    },

    async create(input: NotificationInput): Promise<Notification> {
      await checkInput(input)
      const row = await data.notifications.insert(stored(input))
      enabledDefinitions.invalidate()
      return present(row)
    },

    /** Changes a definition; keys left out keep their value. */
    async update(id: number, changes: { [K in keyof NotificationInput]?: NotificationInput[K] | undefined }): Promise<Notification> {
      const row = await requireRow(id)
      // A key given as undefined keeps its value, as one left out does.
      const given = Object.fromEntries(Object.entries(changes ?? {}).filter(([, value]) => value !== undefined)) as Partial<NotificationInput>
      const merged: NotificationInput = { ...present(row), ...given }
      await checkInput(merged)
      const saved = await data.notifications.update(row.id, stored(merged))
      enabledDefinitions.invalidate()
      return present(saved!)
    },

    /** Adds one of the ready-made notifications (NOTIFICATION_TEMPLATES), disabled, to read and enable. */
    async createFromTemplate(name: NotificationTemplateName): Promise<Notification> {
      if (!Object.hasOwn(NOTIFICATION_TEMPLATES, name)) throw new NotificationConfigError('template', `no template "${String(name)}" (${Object.keys(NOTIFICATION_TEMPLATES).join(', ')})`)
      const template = NOTIFICATION_TEMPLATES[name]
      const input: NotificationInput = { ...template, statuses: [...template.statuses], triggers: [...template.triggers] }
      await checkInput(input)
      const row = await data.notifications.insert(stored(input))
      enabledDefinitions.invalidate()
      return present(row)
    },

    async remove(id: number): Promise<void> {
      await requireRow(id)
      await data.notifications.remove(id)
      enabledDefinitions.invalidate()
    },

    /**
     * Renders the definition against a real shipment (as if it had just reached its status), or a real
     * return (`{ returnId }`, as if it had just reached its state), and, with a transport, sends it to
     * `to` (default: the definition's recipients). Returns what was rendered.
     */
    async sendTest(id: number, about: number | { returnId: number }, to?: string[]): Promise<RenderedNotification & { sent: boolean }> {
      const definition = await requireRow(id)
      let rendered: RenderedNotification
      let shipmentId: number | null = null
      let returnId: number | null = null
      if (typeof about === 'number') {
        const row = Number.isSafeInteger(about) ? await data.findShipment(about) : undefined
        if (!row) throw new NotificationConfigError('shipmentId', `no shipment ${about}`)
        const shipment = toShipment(row, timeZone)
        shipmentId = shipment.id
        rendered = await render(definition, await shipmentScope(shipment, { from: null, to: shipment.status, message: null }))
      } else {
        const row = Number.isSafeInteger(about?.returnId) ? await data.returns.find(about.returnId) : undefined
        if (!row) throw new NotificationConfigError('returnId', `no return ${String(about?.returnId)}`)
        const entry = toReturn(row, timeZone)
        returnId = entry.id
        const trigger = definition.triggers.find(isReturnTrigger)
        rendered = await render(definition, await returnScope(entry, { from: null, to: entry.state, message: entry.stateMessage, trigger }))
      }
      const recipients = to ?? rendered.to
      for (const address of recipients) if (!EMAIL.test(address)) throw new NotificationConfigError('to', `"${address}" is not an email address`)
      if (!deps.options || recipients.length === 0) return { ...rendered, to: recipients, sent: false }
      await deps.options.sendMail({ ...rendered, to: recipients, language: definition.language, messageId: `<test-${Date.now()}-${id}@fastify-shipments>`, notificationId: id, shipmentId, returnId })
      return { ...rendered, to: recipients, sent: true }
    },

    /** The notification's jobs, newest first, each with its attempt log (for the admin pages). */
    async deliveries(id: number, limit = 50) {
      const rows = await data.outbox.list({ name: NOTIFICATION_JOB, orderingKeyPrefix: `notification:${id}:`, newestFirst: true, limit })
      return Promise.all(
        rows.map(async (row) => ({
          id: row.messageId,
          // A job is about a shipment or (a return trigger) a return: the other is null.
          shipmentId: (row.payload as { shipmentId?: number }).shipmentId ?? null,
          returnId: (row.payload as { returnId?: number }).returnId ?? null,
          // The status reached, or the return's state for a return trigger.
          toStatus: (row.payload as { to: string }).to,
          state: row.state,
          attempts: (await data.outbox.attempts(row.id)).map((attempt) => ({
            date: formatIsoWithOffset(attempt.attemptedAt.getTime(), timeZone),
            error: attempt.error,
          })),
          lastError: row.lastError,
          dateCreated: formatIsoWithOffset(row.createdAt.getTime(), timeZone),
        })),
      )
    },
  }
}
