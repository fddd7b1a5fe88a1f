// Shipping rules: saved whole once every rule is checked (a refusal names each rule and field and writes
// nothing; a named carrier and service is checked against the provider's list), the first enabled rule
// whose conditions hold wins, the default otherwise; each choice against the local EasyPost imitation's
// rates; the dry run's words; the routes' statuses, bodies and permissions; the admin screen.
import t, { type Test } from 'tap'
import { eq } from 'drizzle-orm'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { as, buildTestApp, insertOrder } from './fixtures/app.js'
import { adminClient, buildAdminApp, fieldMarkup } from './fixtures/admin.js'
import { tables } from './fixtures/database.js'
import { easyPostImitation, type ImitationCarrierAccount } from './fixtures/easypost-api.js'
import { declareCustoms } from './fixtures/customs.js'
import { defineProvider, SHIPPING_RULES_STATE_KEY, type ShippingRuleChoice, type ShippingRuleInput, type ShippingRules } from '../src/index.js'

const API_KEY = 'EZTK-shipping-rules-0123456789abcdef'
const SHIP_FROM = { name: 'Warehouse', street1: '417 Montgomery Street', city: 'San Francisco', state: 'CA', postalCode: '94104', country: 'US' }
const json = (user: string) => ({ ...as(user), 'content-type': 'application/json' })

/** A label seller without `services()`: its rules' carriers and services are taken as typed. */
const plainSeller = defineProvider({
  id: 'plain-seller',
  settingsSchema: Type.Object({}),
  async handleGatewayRequest() {
    return { statusCode: 200, body: {} }
  },
  deliveries: {
    async purchaseLabel() {
      throw new Error('not in these tests')
    },
    async recoverLabel() {
      return { state: 'not-purchased' as const }
    },
    async voidLabel() {
      return { refundStatus: 'submitted' }
    },
  },
})

/** A label seller whose list of services holds odd items beside one good one. */
const listingSeller = defineProvider({
  id: 'listing-seller',
  settingsSchema: Type.Object({}),
  async handleGatewayRequest() {
    return { statusCode: 200, body: {} }
  },
  deliveries: {
    ...plainSeller.deliveries!,
    async services() {
      return [{ carrier: 'Acme', service: 'Fast' }, { carrier: 5, service: 'Slow' }, 'Acme Cheap', { carrier: 'Acme\u202e', service: 'Flipped' }, { carrier: 'Acme', service: '' }] as never
    },
  },
})

interface Prepared {
  imitation: Awaited<ReturnType<typeof easyPostImitation>>
  boxId: number
  /** A shipment to `country` with `parcels` parcels of these weights (kg), its order paid for `shippingMethod`. */
  shipment(options?: { country?: string; weights?: string[]; shippingMethod?: string | null }): Promise<{ shipmentId: number; parcelIds: number[] }>
}

async function prepare(t: Test, app: FastifyInstance, carrierAccounts?: ImitationCarrierAccount[]): Promise<Prepared> {
  const imitation = await easyPostImitation(t, { apiKey: API_KEY, ...(carrierAccounts && { carrierAccounts }) })
  await app.shipments.integrations.create({ name: 'EasyPost', handle: 'easypost', providerId: 'easypost', settings: { webhookSecret: 'secret', apiKey: API_KEY, apiBaseUrl: imitation.baseUrl, timeoutMs: 2000 } })
  const box = await app.shipments.boxes.createBox({ name: 'Small', innerDimensions: { length: '20', width: '15', height: '10', unit: 'cm' }, emptyWeight: { value: '0.1', unit: 'kg' }, maxWeight: { value: '5', unit: 'kg' } })
  return {
    imitation,
    boxId: box.id,
    async shipment({ country = 'US', weights = ['1'], shippingMethod = 'Standard' } = {}) {
      const orderId = await insertOrder(app, { shippingMethod })
      const { db, schema } = tables(app)
      await db.insert(schema.orderAddresses).values({ orderId, kind: 'shipping', fullName: 'Ada', address1: '1 Main St', city: 'Springfield', postalCode: '62701', countryCode: country })
      const [shipment] = await app.shipments.shipments.create(orderId)
      const parcelIds: number[] = []
      for (const weight of weights) parcelIds.push((await app.shipments.deliveries.addParcel(shipment.id, { weight: { value: weight, unit: 'kg' } })).id)
      return { shipmentId: shipment.id, parcelIds }
    },
  }
}

/** The stored setting, as the database holds it (null: never saved). */
async function storedSetting(app: FastifyInstance): Promise<string | null> {
  const { db, schema } = tables(app)
  const rows = await db.select().from(schema.packageState).where(eq(schema.packageState.key, SHIPPING_RULES_STATE_KEY))
  return rows[0]?.value ?? null
}

const cheapest = { kind: 'cheapest' } as const

t.test('saving: the whole list and the default in one write, ids made where absent and kept where sent, service spelled as the provider does', async (t) => {
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM } })
  const { boxId } = await prepare(t, app)
  const body = {
    rules: [
      { id: 'heavy', name: 'Heavy to Canada', integration: 'easypost', conditions: { countries: ['ca', 'MX'], weight: { min: '2', max: '30', unit: 'kg' } }, choice: { kind: 'fastest' }, boxId },
      { name: 'Paid express', integration: 'easypost', conditions: { orderAttribute: { name: 'shippingMethod', values: ['Express'] } }, choice: { kind: 'service', carrier: 'usps', service: 'priority' } },
    ],
    fallback: { integration: 'easypost', choice: { kind: 'cheapestWithin', days: 5 } },
  }
  const saved = await app.inject({ method: 'PUT', url: '/shipments/api/shipping-rules', headers: json('editor'), payload: body })
  t.equal(saved.statusCode, 200, saved.body)
  const answer = saved.json()
  t.equal(answer.success, true)
  t.equal(answer.rules[0].id, 'heavy', 'a sent id is kept')
  t.match(answer.rules[1].id, /^rule_[0-9a-f]{12}$/, 'a rule sent without an id gets one')
  t.same(answer.rules[0].conditions.countries, ['CA', 'MX'], 'country codes upper-cased')
  t.same(answer.rules[1].choice, { kind: 'service', carrier: 'USPS', service: 'Priority' }, "the provider's spelling is stored")
  t.equal(answer.rules[1].enabled, true, 'enabled unless told')
  t.equal(answer.savedBy, 'editor')
  t.match(answer.savedAt, /^\d{4}-\d{2}-\d{2}T/)
  const stored = JSON.parse((await storedSetting(app))!) as ShippingRules
  t.same(stored.rules.map((rule) => rule.id), ['heavy', answer.rules[1].id], 'stored in order, in the one setting')
  t.same(await app.shipments.rules.current(), { rules: answer.rules, fallback: answer.fallback }, 'current() reads what was saved')

  const read = await app.inject({ method: 'GET', url: '/shipments/api/shipping-rules', headers: as('viewer') })
  t.equal(read.statusCode, 200)
  t.same(read.json(), answer, 'GET answers what PUT saved')

  // Saved again, the generated id stays: the id a batch or a dry run names is stable across edits.
  const again = await app.inject({ method: 'PUT', url: '/shipments/api/shipping-rules', headers: json('editor'), payload: { rules: answer.rules.slice().reverse(), fallback: null } })
  t.equal(again.statusCode, 200, again.body)
  t.same(again.json().rules.map((rule: { id: string }) => rule.id), [answer.rules[1].id, 'heavy'], 'the order as sent, the ids kept')
  t.equal(again.json().fallback, null, 'no default')
})

t.test('saving refused: every field of every rule named by position and name, the provider listing its services; nothing written', async (t) => {
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM } })
  await prepare(t, app)
  await app.shipments.rules.replace({ rules: [{ id: 'kept', name: 'Kept', integration: 'easypost', choice: cheapest }], fallback: null })
  const before = await storedSetting(app)
  const body = {
    rules: [
      { id: 'same', name: 'First', integration: 'nowhere', conditions: { countries: ['US', 'XX', 'usa'] }, choice: { kind: 'cheapestWithin', days: 0 } },
      { id: 'same', name: 'Second', integration: 'easypost', conditions: { weight: { min: '5', max: '2', unit: 'kg' }, parcelCount: { min: 3, max: 2 } }, choice: { kind: 'service', carrier: 'USPS', service: 'Teleport' } },
      { name: '  ', integration: 'easypost', conditions: { weight: { min: 'heavy', unit: 'kg' }, orderAttribute: { name: 'shipping method!', values: [] } }, choice: { kind: 'service', carrier: 'FedEx', service: 'FEDEX_GROUND' }, boxId: 99999 },
    ],
    fallback: { integration: 'easypost', choice: { kind: 'cheapestWithin', days: 1.5 } },
  }
  const refused = await app.inject({ method: 'PUT', url: '/shipments/api/shipping-rules', headers: json('editor'), payload: body })
  t.equal(refused.statusCode, 422, refused.body)
  const { success, errors, errorCode } = refused.json()
  t.equal(success, false)
  t.equal(errorCode, 'SHIPMENTS_VALIDATION_FAILED')
  t.same(Object.keys(errors).sort(), [
    'fallback.choice.days',
    'rules.0.choice.days',
    'rules.0.conditions.countries',
    'rules.0.integration',
    'rules.1.choice.service',
    'rules.1.conditions.parcelCount.max',
    'rules.1.conditions.weight.max',
    'rules.1.id',
    'rules.2.boxId',
    'rules.2.choice.service',
    'rules.2.conditions.orderAttribute.name',
    'rules.2.conditions.orderAttribute.values',
    'rules.2.conditions.weight.min',
    'rules.2.name',
  ])
  t.match(errors['rules.0.integration'][0], /^Rule 1 "First", integration: no integration has the handle "nowhere"/)
  t.match(errors['rules.0.conditions.countries'][0], /ISO 3166-1 alpha-2.*"XX", "usa" are not/)
  t.match(errors['rules.0.choice.days'][0], /positive whole number of days/)
  t.match(errors['rules.1.id'][0], /^Rule 2 "Second", id: is the id of rule 1 too/)
  t.match(errors['rules.1.conditions.weight.max'][0], /must be above the min \(5\)/)
  t.match(errors['rules.1.conditions.parcelCount.max'][0], /at least the min \(3\)/)
  t.equal(
    errors['rules.1.choice.service'][0],
    'Rule 2 "Second", choice.service: USPS Teleport is not offered by the integration "easypost"; it offers: USPS First, USPS Priority, USPS Express, USPS GroundAdvantage, USPS LibraryMail, USPS MediaMail, USPS FirstClassMailInternational, USPS FirstClassPackageInternationalService, USPS PriorityMailInternational, USPS ExpressMailInternational, UPS Ground, UPS UPSStandard, UPS UPSSaver, UPS Express, UPS ExpressPlus, UPS Expedited, UPS NextDayAir, UPS NextDayAirSaver, UPS NextDayAirEarlyAM, UPS 2ndDayAir, UPS 2ndDayAirAM, UPS 3DaySelect',
    "an unknown service is refused with the provider's list",
  )
  t.match(errors['rules.2.choice.service'][0], /^Rule 3, choice.service: FedEx FEDEX_GROUND is not offered by the integration "easypost" \(no FedEx account\)/, 'an unknown carrier too; a rule without a name is named by its position')
  t.match(errors['rules.2.name'][0], /is required/)
  t.match(errors['rules.2.boxId'][0], /names no box of the catalogue \(box 99999\)/)
  t.match(errors['rules.2.conditions.weight.min'][0], /decimal/)
  t.match(errors['rules.2.conditions.orderAttribute.name'][0], /must name an order attribute/)
  t.match(errors['rules.2.conditions.orderAttribute.values'][0], /list of 1 to 100 values/)
  t.match(errors['fallback.choice.days'][0], /^The default, choice.days:/)
  t.equal(await storedSetting(app), before, 'nothing written')
  t.equal(
    (await app.shipments.rules.current()).rules[0]!.id,
    'kept',
    'the rules in force are unchanged',
  )

  const unknown = await app.inject({
    method: 'PUT',
    url: '/shipments/api/shipping-rules',
    headers: json('editor'),
    payload: { rules: [{ name: 'x', integration: 'easypost', conditons: { countries: ['CA'] }, choice: { kind: 'cheapest', days: 3 } }], fallback: null },
  })
  t.equal(unknown.statusCode, 422, 'a misspelt field is refused, never dropped (the rule would match every parcel)')
  t.same(unknown.json().errors, {
    'rules.0.conditons': ['Rule 1 "x", conditons: is not a field here (id, name, enabled, integration, conditions, choice, boxId)'],
    'rules.0.choice.days': ['Rule 1 "x", choice.days: is not a field here (kind)'],
  })
  const noDefault = await app.inject({ method: 'PUT', url: '/shipments/api/shipping-rules', headers: json('editor'), payload: { rules: [] } })
  t.same(noDefault.json().errors, { fallback: ['The default: must be sent (null for none)'] }, 'the default is sent every time (null for none): the list is replaced whole')
  const notObject = await app.inject({ method: 'PUT', url: '/shipments/api/shipping-rules', headers: json('editor'), payload: '[]' })
  t.equal(notObject.statusCode, 422, 'a body that is not an object')
  t.equal(await storedSetting(app), before, 'nothing written')
})

t.test("the provider's services: one call per integration, each account read on its own, a failure refused with 502 and nothing written", async (t) => {
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM }, providers: [plainSeller, listingSeller] })
  const { imitation } = await prepare(t, app, [{ type: 7 }, { type: 'UspsAccount' }, { type: 'DhlExpressAccount', readable: 'DHL Express' }, 'odd' as unknown as ImitationCarrierAccount])
  await app.shipments.integrations.create({ name: 'Plain', handle: 'plain', providerId: 'plain-seller', settings: {} })
  const rules = [
    { name: 'DHL', integration: 'easypost', choice: { kind: 'service', carrier: 'dhl express', service: 'ExpressWorldwideNonDoc' } },
    { name: 'USPS', integration: 'easypost', choice: { kind: 'service', carrier: 'USPS', service: 'GroundAdvantage' } },
    { name: 'Plain', integration: 'plain', choice: { kind: 'service', carrier: 'Anything', service: 'As typed' } },
  ] satisfies ShippingRuleInput[]
  const saved = await app.shipments.rules.replace({ rules, fallback: null })
  t.same(
    saved.rules.map((rule) => rule.choice),
    [
      { kind: 'service', carrier: 'DHL Express', service: 'ExpressWorldwideNonDoc' },
      { kind: 'service', carrier: 'USPS', service: 'GroundAdvantage' },
      { kind: 'service', carrier: 'Anything', service: 'As typed' },
    ],
    "an account type without a list accepts any of its carrier's services; a provider without services() takes them as typed",
  )
  t.equal(imitation.calls.filter((call) => call.step === 'carrier-accounts').length, 1, 'one call for the two rules of one integration')

  const before = await storedSetting(app)
  imitation.fault({ step: 'carrier-accounts', kind: 'error', status: 500, code: 'INTERNAL_SERVER_ERROR', message: 'Something went wrong' })
  const failed = await app.inject({ method: 'PUT', url: '/shipments/api/shipping-rules', headers: json('editor'), payload: { rules: rules.slice(1, 2), fallback: null } })
  t.equal(failed.statusCode, 502, failed.body)
  t.match(failed.json(), { errorCode: 'SHIPMENTS_RULES_SERVICES_UNAVAILABLE', status: 502, message: /The services of the integration easypost could not be listed.*nothing was saved.*500/ })
  imitation.setCarrierAccounts({ not: 'a list' })
  const odd = await app.inject({ method: 'PUT', url: '/shipments/api/shipping-rules', headers: json('editor'), payload: { rules: rules.slice(1, 2), fallback: null } })
  t.equal(odd.statusCode, 502, 'an answer that is not a list is refused')
  t.equal(await storedSetting(app), before, 'nothing written')
  await app.shipments.integrations.create({ name: 'Listing', handle: 'listing', providerId: 'listing-seller', settings: {} })
  const listed = await app.inject({ method: 'PUT', url: '/shipments/api/shipping-rules', headers: json('editor'), payload: { rules: [{ name: 'Acme', integration: 'listing', choice: { kind: 'service', carrier: 'Acme', service: 'Slow' } }], fallback: null } })
  t.equal(listed.statusCode, 422)
  t.same(listed.json().errors, { 'rules.0.choice.service': ['Rule 1 "Acme", choice.service: Acme Slow is not offered by the integration "listing"; it offers: Acme Fast'] }, "each item of the provider's list is read on its own: the odd ones are left out")
  t.equal((await app.shipments.rules.replace({ rules: [{ name: 'Acme', integration: 'listing', choice: { kind: 'service', carrier: 'ACME', service: 'fast' } }], fallback: null })).rules[0]!.choice.kind, 'service', 'the good item stands')
  const cheapestOnly = await app.inject({ method: 'PUT', url: '/shipments/api/shipping-rules', headers: json('editor'), payload: { rules: [{ name: 'Any', integration: 'easypost', choice: cheapest }], fallback: null } })
  t.equal(cheapestOnly.statusCode, 200, 'rules naming no service never ask for the list')
})

t.test('matching: the first enabled rule whose conditions hold, disabled rules skipped, the default, or nothing', async (t) => {
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM } })
  const prepared = await prepare(t, app)
  const express = { kind: 'service', carrier: 'USPS', service: 'Express' } as const
  await app.shipments.rules.replace({
    rules: [
      { id: 'off', name: 'Disabled Canada', enabled: false, integration: 'easypost', conditions: { countries: ['CA'] }, choice: express },
      { id: 'canada', name: 'Canada', integration: 'easypost', conditions: { countries: ['CA', 'MX'] }, choice: { kind: 'service', carrier: 'UPS', service: 'Ground' } },
      { id: 'light', name: 'Light', integration: 'easypost', conditions: { weight: { min: '0.5', max: '2', unit: 'kg' } }, choice: { kind: 'service', carrier: 'USPS', service: 'First' } },
      { id: 'many', name: 'Many parcels', integration: 'easypost', conditions: { parcelCount: { min: 3 } }, choice: { kind: 'service', carrier: 'UPS', service: 'NextDayAir' } },
      { id: 'paid', name: 'Paid express', integration: 'easypost', conditions: { orderAttribute: { name: 'shippingMethod', values: ['Express', 'Overnight'] } }, choice: express },
      { id: 'also-canada', name: 'Canada again', integration: 'easypost', conditions: { countries: ['CA'] }, choice: express },
    ],
    fallback: { integration: 'easypost', choice: { kind: 'service', carrier: 'USPS', service: 'Priority' } },
  })
  const decided = async (shipment: { shipmentId: number; parcelIds: number[] }, index = 0) => {
    const decision = await app.shipments.rules.decide(shipment.shipmentId, shipment.parcelIds[index]!)
    return decision.outcome === 'buy' ? `${decision.match.rule?.id ?? 'default'}: ${decision.carrier} ${decision.service}` : `none: ${decision.reason}`
  }
  t.equal(await decided(await prepared.shipment({ country: 'CA', weights: ['1'] })), 'canada: UPS Ground', 'the disabled rule is skipped; the first that holds wins over a later one (and over Light)')
  t.equal(await decided(await prepared.shipment({ weights: ['0.5'] })), 'light: USPS First', 'the weight range takes its min')
  t.equal(await decided(await prepared.shipment({ weights: ['2'] })), 'default: USPS Priority', 'and leaves out its max')
  t.equal(await decided(await prepared.shipment({ weights: ['1.9999'] })), 'light: USPS First', 'just below the max')
  t.equal(await decided(await prepared.shipment({ weights: ['0.4999'] })), 'default: USPS Priority', 'just below the min')
  const three = await prepared.shipment({ weights: ['5', '6', '7'] })
  t.equal(await decided(three, 2), 'many: UPS NextDayAir', 'the parcel count: 3 or more')
  t.equal(await decided(await prepared.shipment({ weights: ['5', '6'] })), 'default: USPS Priority', 'two parcels do not')
  t.equal(await decided(await prepared.shipment({ weights: ['5'], shippingMethod: 'Overnight' })), 'paid: USPS Express', "the order's shipping method (the reference store's attribute)")
  t.equal(await decided(await prepared.shipment({ weights: ['5'], shippingMethod: null })), 'default: USPS Priority', 'an order without one does not match')

  await app.shipments.rules.replace({ rules: (await app.shipments.rules.current()).rules, fallback: null })
  t.equal(await decided(await prepared.shipment({ weights: ['5'] })), 'none: no shipping rule matches this parcel and there is no default', 'no default: nothing is bought')
  t.match(prepared.imitation.stats, { creates: 0, buys: 0, refunds: 0, scanForms: 0 }, 'named services are decided without asking for rates; nothing bought')
})

t.test("each choice against the imitation's rates: cheapest, cheapest within N days, fastest, a named service", async (t) => {
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM } })
  const prepared = await prepare(t, app)
  const shipment = await prepared.shipment()
  const choose = async (choice: ShippingRuleChoice) => {
    await app.shipments.rules.replace({ rules: [], fallback: { integration: 'easypost', choice } })
    const decision = await app.shipments.rules.decide(shipment.shipmentId, shipment.parcelIds[0]!)
    return decision.outcome === 'buy' ? `${decision.carrier} ${decision.service} ${decision.quote?.amount ?? 'unrated'}` : `none: ${decision.reason}`
  }
  t.equal(await choose({ kind: 'cheapest' }), 'USPS GroundAdvantage 5.25')
  t.equal(await choose({ kind: 'cheapestWithin', days: 3 }), 'USPS Priority 7.90', 'the cheapest of those within 3 days (Priority 2 days, UPS Ground 3 days)')
  t.equal(await choose({ kind: 'cheapestWithin', days: 1 }), 'none: no offer arrives within 1 days')
  t.equal(await choose({ kind: 'fastest' }), 'USPS Priority 7.90')
  t.equal(await choose({ kind: 'service', carrier: 'UPS', service: 'Ground' }), 'UPS Ground unrated', 'a named service is bought as named')
  const { db, schema } = tables(app)
  const quotes = await db.select().from(schema.rateQuotes)
  t.equal(quotes.length, 12, 'each rated decision stored its quotes (four of them, three offers each), for the purchase to take the very offer')
  t.equal(prepared.imitation.stats.buys, 0, 'nothing bought')
})

t.test('the dry run: facts, each rule tried with its checks in words, the rule or the default; rated, the offer or why none fits', async (t) => {
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM } })
  const prepared = await prepare(t, app)
  await app.shipments.rules.replace({
    rules: [
      { id: 'off', name: 'Paused', enabled: false, integration: 'easypost', choice: cheapest },
      { id: 'canada', name: 'Canada', integration: 'easypost', conditions: { countries: ['CA'], weight: { max: '2', unit: 'kg' } }, choice: cheapest },
      { id: 'heavy', name: 'Heavy', integration: 'easypost', conditions: { weight: { min: '3', unit: 'kg' }, parcelCount: { max: 1 } }, choice: { kind: 'cheapestWithin', days: 1 } },
    ],
    fallback: { integration: 'easypost', choice: { kind: 'fastest' } },
  })
  const light = await prepared.shipment({ country: 'US', weights: ['1.5'] })
  const dry = await app.shipments.rules.explain(light.shipmentId)
  t.equal(dry.rated, false)
  const [parcel] = dry.parcels
  t.equal(parcel!.factsText, 'Ships to US (United States); weighs 1.5 kg; the shipment has 1 parcel; order attributes: shippingMethod "Standard".')
  t.same(
    parcel!.tried.map((rule) => rule.why),
    [
      'Skipped: the rule is disabled.',
      'Does not match: ships to US, not one of CA (holds: weighs 1.5 kg, within 0 to below 2 kg).',
      'Does not match: weighs 1.5 kg, outside 3 or more kg (holds: the shipment has 1 parcel, within 1 to 1).',
    ],
  )
  t.equal(parcel!.rule, null)
  t.equal(parcel!.usedDefault, true)
  t.equal(parcel!.summary, 'No rule matches, so the default applies: it would buy the fastest offer through "easypost" (the cheapest of the fastest).')
  t.equal(prepared.imitation.stats.creates, 0, 'unrated: the carrier is not asked')

  const rated = await app.shipments.rules.explain(light.shipmentId, { rate: true })
  t.match(rated.parcels[0], { rated: true, offer: { carrier: 'USPS', service: 'Priority', amount: '7.90' }, refused: null })
  t.match(rated.parcels[0]!.summary, /With the rates asked now, that is USPS Priority at 7\.90 USD, 2 days \(quote \d+\)\.$/)

  const heavy = await prepared.shipment({ weights: ['4'] })
  const none = await app.shipments.rules.explain(heavy.shipmentId, { rate: true })
  t.match(none.parcels[0], { rule: { id: 'heavy', name: 'Heavy', position: 3 }, offer: null, refused: 'No offer arrives within 1 days.' })
  t.equal(none.parcels[0]!.summary, 'Rule 3 "Heavy" matches, so it would buy the cheapest offer through "easypost" that arrives within 1 day. With the rates asked now, nothing fits: No offer arrives within 1 days.')
  t.equal(prepared.imitation.stats.buys, 0, 'the dry run buys nothing')
  t.equal((await app.shipments.rules.explain((await prepared.shipment({ weights: [] })).shipmentId)).parcels.length, 0, 'a shipment without parcels has nothing to explain')

  // A parcel weighed in pounds against a rule in kilograms: compared exactly (2 kg is 4.4092 lb).
  const pounds = await prepared.shipment({ country: 'CA', weights: [] })
  const parcel4 = await app.shipments.deliveries.addParcel(pounds.shipmentId, { weight: { value: '4.4', unit: 'lb' } })
  const inPounds = await app.shipments.rules.explain(pounds.shipmentId)
  t.match(inPounds.parcels[0], { parcelId: parcel4.id, rule: { id: 'canada' } }, '4.4 lb is below 2 kg')
  t.match(inPounds.parcels[0]!.tried[1]!.why, 'Matches: ships to CA, one of CA; weighs 4.4 lb, within 0 to below 2 kg.')
})

t.test("the dry run rated without a ship-from address: the parcel's answer says what is missing", async (t) => {
  const app = await buildTestApp(t)
  const prepared = await prepare(t, app)
  await app.shipments.rules.replace({ rules: [], fallback: { integration: 'easypost', choice: cheapest } })
  const { shipmentId } = await prepared.shipment()
  const rated = await app.shipments.rules.explain(shipmentId, { rate: true })
  t.match(rated.parcels[0], { rated: true, offer: null, refused: /No ship-from address is set/ })
  t.match(rated.parcels[0]!.summary, /With the rates asked now, nothing fits: No ship-from address is set/)
  const decided = await app.shipments.rules.decide(shipmentId, rated.parcels[0]!.parcelId).catch((error: Error) => error.message)
  t.match(decided, /No ship-from address is set/, 'decide leaves the refusal to its caller (a batch records it)')
})

t.test('routes: statuses, bodies and permissions', async (t) => {
  // Shipped from Canada: the rated parcel to CA is domestic (an international one needs its customs declaration, see customs-forms.test.ts).
  const app = await buildTestApp(t, { deliveries: { shipFrom: SHIP_FROM } })
  const prepared = await prepare(t, app)
  const { shipmentId } = await prepared.shipment({ country: 'CA' })
  // Canada is abroad: the parcel's declaration is complete, so rating reaches the carrier.
  await declareCustoms(app, shipmentId)
  const body = { rules: [{ id: 'canada', name: 'Canada', integration: 'easypost', conditions: { countries: ['CA'] }, choice: cheapest }], fallback: null }

  t.equal((await app.inject({ method: 'GET', url: '/shipments/api/shipping-rules' })).statusCode, 401, 'no user')
  t.match((await app.inject({ method: 'GET', url: '/shipments/api/shipping-rules', headers: as('nobody') })).json(), { status: 403, errorCode: 'SHIPMENTS_FORBIDDEN' })
  t.same((await app.inject({ method: 'GET', url: '/shipments/api/shipping-rules', headers: as('viewer') })).json(), { success: true, rules: [], fallback: null, savedAt: null, savedBy: null }, 'no rules yet')
  const forbidden = await app.inject({ method: 'PUT', url: '/shipments/api/shipping-rules', headers: json('viewer'), payload: body })
  t.match(forbidden.json(), { status: 403, message: /shipments-editShipments/ }, 'saving needs editShipments')
  t.equal(await storedSetting(app), null)
  t.equal((await app.inject({ method: 'PUT', url: '/shipments/api/shipping-rules', headers: json('editor'), payload: body })).statusCode, 200)

  const dry = await app.inject({ method: 'GET', url: `/shipments/api/shipments/${shipmentId}/shipping-rules`, headers: as('viewer') })
  t.equal(dry.statusCode, 200, dry.body)
  t.match(dry.json(), { success: true, shipmentId, rated: false, parcels: [{ rule: { id: 'canada', position: 1 }, usedDefault: false, offer: null, tried: [{ id: 'canada', matched: true, checks: [{ condition: 'countries', held: true, why: 'ships to CA, one of CA' }] }] }] })
  const rateForbidden = await app.inject({ method: 'GET', url: `/shipments/api/shipments/${shipmentId}/shipping-rules?rate=true`, headers: as('viewer') })
  t.equal(rateForbidden.statusCode, 403, 'rating stores quotes: it needs editShipments')
  t.equal(prepared.imitation.stats.creates, 0)
  const rated = await app.inject({ method: 'GET', url: `/shipments/api/shipments/${shipmentId}/shipping-rules?rate=true`, headers: as('editor') })
  t.equal(rated.statusCode, 200, rated.body)
  t.match(rated.json(), { rated: true, parcels: [{ rated: true, offer: { carrier: 'USPS', service: 'GroundAdvantage', amount: '5.25', integration: 'easypost' } }] })
  const { db, schema } = tables(app)
  t.equal((await db.select().from(schema.rateQuotes)).length, 3, 'the offers stored as quotes')
  t.equal(prepared.imitation.stats.buys, 0)

  t.match((await app.inject({ method: 'GET', url: '/shipments/api/shipments/999999/shipping-rules', headers: as('viewer') })).json(), { status: 404, errorCode: 'SHIPMENTS_SHIPMENT_NOT_FOUND' })
  t.equal((await app.inject({ method: 'GET', url: '/shipments/api/shipments/abc/shipping-rules', headers: as('viewer') })).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: `/shipments/api/shipments/${shipmentId}/shipping-rules?rate=maybe`, headers: as('viewer') })).statusCode, 400, 'rate is true or false')
  const notJson = await app.inject({ method: 'PUT', url: '/shipments/api/shipping-rules', headers: { ...as('editor'), 'content-type': 'text/plain' }, payload: 'rules' })
  t.equal(notJson.statusCode, 415)
})

t.test('admin: the rules screen (add, edit with errors beside fields, move, disable, delete, the default) and the shipment page panel', async (t) => {
  const app = await buildAdminApp(t, { deliveries: { shipFrom: SHIP_FROM } })
  const prepared = await prepare(t, app)
  const admin = adminClient(app, 'admin')

  const empty = await admin.get('/shipping-rules')
  t.equal(empty.statusCode, 200)
  t.match(empty.body, /<a href="\/shipments\/admin\/shipping-rules" aria-current="page">Shipping rules<\/a>/, 'in the navigation')
  t.match(empty.body, /No rules yet\./)

  await admin.get('/shipping-rules/new')
  const form = { name: 'Canada', enabled: 'true', integration: 'easypost', countries: 'CA, XX', weightMin: '', weightMax: '', weightUnit: 'kg', parcelMin: '', parcelMax: 'two', attributeName: '', attributeValues: '', choiceKind: 'service', days: '', carrier: 'USPS', service: 'Teleport', boxId: '' }
  const refused = await admin.post('/shipping-rules/new', form)
  t.equal(refused.statusCode, 422)
  t.match(fieldMarkup(refused.body, 'countries'), /aria-invalid="true"[\s\S]*must hold ISO 3166-1 alpha-2 country codes, such as US or DE: &quot;XX&quot; is not one/, 'the country beside its field')
  t.match(fieldMarkup(refused.body, 'parcelMax'), /must be a whole number from 1 to 1000/)
  t.match(fieldMarkup(refused.body, 'service'), /USPS Teleport is not offered by the integration &quot;easypost&quot;; it offers: USPS First/)
  t.match(refused.body, /<div class="error-summary"[\s\S]*href="#input-countries"/, 'the summary links to the field')
  t.match(fieldMarkup(refused.body, 'countries'), /value="CA, XX"/, 'what was typed is kept')
  t.equal(await storedSetting(app), null, 'nothing written')

  const created = await admin.post('/shipping-rules/new', { ...form, countries: 'ca mx', parcelMax: '2', service: 'Priority' })
  t.equal(created.statusCode, 303, created.body)
  await admin.post('/shipping-rules/new', { ...form, name: 'Everything else', countries: '', parcelMax: '', choiceKind: 'cheapest', carrier: '', service: '', boxId: String(prepared.boxId) })
  let rules = (await app.shipments.rules.current()).rules
  t.same(rules.map((rule) => [rule.name, rule.conditions, rule.choice, rule.boxId]), [
    ['Canada', { countries: ['CA', 'MX'], parcelCount: { max: 2 } }, { kind: 'service', carrier: 'USPS', service: 'Priority' }, null],
    ['Everything else', {}, { kind: 'cheapest' }, prepared.boxId],
  ])

  const list = await admin.get('/shipping-rules')
  t.match(list.body, /<td>1<\/td><td id="rule-name-[^"]+"><a href="[^"]+"><bdi>Canada<\/bdi><\/a>[\s\S]*to CA, MX; 1 to 2 parcels[\s\S]*USPS Priority through &quot;easypost&quot;, as named/)
  const [canada, rest] = rules
  t.equal((await admin.post(`/shipping-rules/rule/${canada!.id}/down`, {})).statusCode, 303)
  t.same((await app.shipments.rules.current()).rules.map((rule) => rule.name), ['Everything else', 'Canada'], 'moved down')
  await admin.post(`/shipping-rules/rule/${canada!.id}/up`, {})
  await admin.post(`/shipping-rules/rule/${rest!.id}/disable`, {})
  rules = (await app.shipments.rules.current()).rules
  t.same(rules.map((rule) => [rule.name, rule.enabled]), [['Canada', true], ['Everything else', false]], 'moved up; disabled')

  const edit = await admin.get(`/shipping-rules/rule/${canada!.id}`)
  t.match(fieldMarkup(edit.body, 'countries'), /value="CA, MX"/)
  const edited = await admin.post(`/shipping-rules/rule/${canada!.id}`, { ...form, name: 'Canada and Mexico', countries: 'CA, MX', parcelMax: '', choiceKind: 'cheapestWithin', days: '0' })
  t.equal(edited.statusCode, 422)
  t.match(fieldMarkup(edited.body, 'days'), /positive whole number of days/)
  await admin.post(`/shipping-rules/rule/${canada!.id}`, { ...form, name: 'Canada and Mexico', countries: 'CA, MX', parcelMax: '', choiceKind: 'cheapestWithin', days: '3' })
  t.same((await app.shipments.rules.current()).rules[0], { ...canada, name: 'Canada and Mexico', conditions: { countries: ['CA', 'MX'] }, choice: { kind: 'cheapestWithin', days: 3 } }, 'edited in place, its id kept')

  await admin.get('/shipping-rules')
  const noDefault = await admin.post('/shipping-rules/default', { defaultIntegration: 'easypost', defaultChoiceKind: 'service', defaultCarrier: 'UPS', defaultService: 'Warp', defaultDays: '', defaultBoxId: '' })
  t.equal(noDefault.statusCode, 422)
  t.match(fieldMarkup(noDefault.body, 'defaultService'), /UPS Warp is not offered/)
  t.equal((await admin.post('/shipping-rules/default', { defaultIntegration: 'easypost', defaultChoiceKind: 'fastest', defaultCarrier: '', defaultService: '', defaultDays: '', defaultBoxId: '' })).statusCode, 303)
  t.same((await app.shipments.rules.current()).fallback, { integration: 'easypost', choice: { kind: 'fastest' }, boxId: null })

  const { shipmentId } = await prepared.shipment({ country: 'US' })
  const page = await admin.get(`/shipments/${shipmentId}`)
  t.match(page.body, /<section id="shipping-rules" aria-labelledby="shipping-rules-title"><h2 id="shipping-rules-title">Which rule and why<\/h2>/)
  t.match(page.body, /No rule matches, so the default applies: it would buy the fastest offer through &quot;easypost&quot;/)
  t.match(page.body, /Skipped: the rule is disabled\./)
  const ratedPage = await admin.post(`/shipments/${shipmentId}/shipping-rules/rate`, {})
  t.equal(ratedPage.statusCode, 200)
  t.match(ratedPage.body, /With the rates asked now, that is USPS Priority at 7\.90 USD, 2 days/)
  t.equal(prepared.imitation.stats.buys, 0)

  const viewer = adminClient(app, 'viewer')
  const viewed = await viewer.get('/shipping-rules')
  t.notMatch(viewed.body, /Move up|Add a rule|Save the default/, 'a viewer sees the rules, no actions')
  const viewerPage = await viewer.get(`/shipments/${shipmentId}`)
  t.notMatch(viewerPage.body, /Rate by the rules/, 'nor the rate button')
  t.equal((await viewer.post(`/shipping-rules/rule/${canada!.id}/delete`, {})).statusCode, 403)
  t.equal((await admin.post(`/shipping-rules/rule/${canada!.id}/delete`, {})).statusCode, 303)
  t.same((await app.shipments.rules.current()).rules.map((rule) => rule.name), ['Everything else'], 'deleted')
  t.equal((await admin.get('/shipping-rules/rule/nope')).statusCode, 404)
})
