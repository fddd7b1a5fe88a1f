// The `orderExchange` option as the plugin checks it: the settings (settings.ts), and the order store's
// methods the exchange calls.
import { requireOrderStoreMethods } from '../orders/options.js'
import { resolveOrderExchangeSettings, type OrderExchangeSettingError, type OrderExchangeSettings } from './settings.js'

/** The exchange's settings, or null when the option is absent (the endpoint is not mounted). */
export function resolveOrderExchangeOptions(orderExchange: unknown, orderStore: unknown, fail: (option: string, reason: string) => never): OrderExchangeSettings | null {
  if (orderExchange === undefined) return null
  let settings: OrderExchangeSettings | null = null
  try {
    settings = resolveOrderExchangeSettings(orderExchange)
  } catch (error) {
    // The settings are checked by one function, which throws one kind of error, naming the setting.
    const { option, reason } = error as OrderExchangeSettingError
    fail(option, reason)
  }
  if (orderStore !== undefined) requireOrderStoreMethods(orderStore, ['exportOrders', 'recordShipNotification'], ' for orderExchange', fail)
  return settings
}
