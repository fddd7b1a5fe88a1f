// The order advance a move to shipped causes: refused before the change while the order status it
// would set does not exist, and applied after the commit by an outbox job, retried until the order
// store takes it.
import { ShipmentUpdateRejectedError } from '../errors.js'
import { shortError, type JobHandler } from '../outbox/dispatcher.js'
import type { ShipmentServiceContext } from './service-context.js'

/** The outbox job that applies the order advance; retried until the order store takes it. */
export const ORDER_ADVANCE_JOB = 'orderAdvance'

export function createOrderAdvance(shared: ShipmentServiceContext) {
  const { deps } = shared
  const { orderStore, logger } = deps

  /**
   * The order advance, as an outbox job: retried (1 s, doubling, at most an hour apart) until the order
   * store takes it, so no crash or store failure leaves an order behind; setting the same status twice
   * is harmless, and its orderAdvanced event is written once (its id derives from the job's).
   */
  const orderAdvanceJob: JobHandler = {
    retryDelayMs: (attempt) => Math.min(1000 * 2 ** Math.min(attempt - 1, 20), 60 * 60 * 1000),
    async run(row) {
      const { orderId, status, shipmentId } = row.payload as { orderId: number; status: string; shipmentId: number }
      try {
        await orderStore.setOrderStatus(orderId, status)
      } catch (error) {
        logger.error({ err: error, orderId, status }, 'Could not advance the order of a shipped shipment; it will be retried')
        return { state: 'retry', error: shortError(error) }
      }
      return {
        state: 'done',
        followUps: [
          { kind: 'event', name: 'orderAdvanced', messageId: `${row.messageId}:advanced`, orderingKey: `order:${orderId}`, payload: { orderId, status, shipmentId } },
        ],
      }
    },
  }

  /** A move to shipped is refused while the order status it would advance the order to does not exist. */
  async function requireShippedOrderStatus(id: number) {
    const status = deps.shippedOrderStatus
    if (status === null || !orderStore.orderStatusExists || (await orderStore.orderStatusExists(status))) return
    logger.error({ shipmentId: id, shippedOrderStatus: status }, 'A shipment cannot be shipped: the order status shippedOrderStatus names does not exist')
    throw new ShipmentUpdateRejectedError(
      `Couldn't update shipment ${id}: the order status "${status}" (shippedOrderStatus) does not exist. Create it first.`,
    )
  }

  return { orderAdvanceJob, requireShippedOrderStatus }
}

export type OrderAdvance = ReturnType<typeof createOrderAdvance>
