// The stored notification definitions: created (from scratch or from a ready-made template, disabled),
// changed, read and removed, each checked first (its templates parsed by the engines that render them).
import type { NotificationRow, NotificationValues } from '../db/data-layer.js'
import { NotificationConfigError } from '../errors.js'
import { isShipmentStatus, SHIPMENT_STATUSES, type ShipmentStatus } from '../model/shipment.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import { formatIsoWithOffset } from '../time.js'
import { NOTIFICATION_TEMPLATES, type NotificationTemplateName } from './templates.js'
import { EMAIL, NOTIFICATION_RECIPIENTS, NOTIFICATION_TRIGGERS, type Notification, type NotificationInput, type NotificationRecipient, type NotificationTrigger } from './notification.js'
import type { NotificationServiceContext } from './notification-context.js'

const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/
const TEMPLATE_LIMIT = 20_000

export function createNotificationDefinitions(shared: NotificationServiceContext) {
  const { deps, engines, enabledDefinitions, requireRow } = shared
  const { data, timeZone } = deps

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

  return {
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
  }
}
