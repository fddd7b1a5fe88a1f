// Voiding a return label bought and not used: the refund asked of the provider first, then the label
// leaves the return in one change.
import type { ReturnState } from '../db/returns.js'
import { ReturnErrors } from '../errors.js'
import { DeliveryProviderError } from '../gateway/delivery-provider.js'
import type { Return } from '../model/return.js'
import type { ReturnContext, ReturnServiceContext } from './service-context.js'

/** States in which a bought label is unused, so it may be voided: once in transit the carrier has it. */
const VOIDABLE: readonly ReturnState[] = ['label_sent', 'authorised', 'rejected']

export function createReturnLabelVoid(shared: ReturnServiceContext) {
  const { deps, requireReturn, change, withLabelLock } = shared
  const { labels } = deps

  /**
   * Voids a return label bought and not used (the return still `label_sent`, or authorised or rejected
   * since), as outbound labels are voided: the provider is asked for the refund first (EasyPost: a refund
   * of the return shipment), then the label leaves the return in one change with its history row and
   * `returnLabelVoided`; a `label_sent` return is authorised again, free for another label or a tracking
   * number by hand. A refusal by the provider changes nothing.
   */
  async function voidLabel(id: number, context: ReturnContext = {}): Promise<{ return: Return; refundStatus: string }> {
    await requireReturn(id)
    return withLabelLock(id, async () => {
      const current = await requireReturn(id)
      if (current.labelState !== 'purchased' || current.labelExternalId === null || current.labelIntegrationId === null || !VOIDABLE.includes(current.state)) {
        throw new ReturnErrors.LabelNotVoidable(id, current.state)
      }
      const at = await labels.deliveryProviderById(current.labelIntegrationId)
      let refundStatus: string
      try {
        ;({ refundStatus } = await at.provider.deliveries.voidLabel({ externalId: current.labelExternalId }, at.context, labels.journalFor(current.labelOperationId!)))
      } catch (error) {
        if (error instanceof DeliveryProviderError) throw labels.refusal(error)
        throw error
      }
      const voided = await change(id, context, (latest) => ({
        columns: {
          labelState: null,
          labelOperationId: null,
          labelExternalId: null,
          labelIntegrationId: null,
          labelUrl: null,
          labelFormat: null,
          labelCost: null,
          labelCurrency: null,
          trackingNumber: null,
          trackingUrl: null,
          carrier: null,
          service: null,
        },
        state: latest.state === 'label_sent' ? 'authorised' : null,
        action: 'label_voided',
        message: `Refund ${refundStatus}${current.trackingNumber ? ` (${current.carrier ?? 'carrier'} ${current.trackingNumber})` : ''}`,
        event: 'returnLabelVoided',
      }))
      return { return: voided, refundStatus }
    })
  }

  return { voidLabel }
}
