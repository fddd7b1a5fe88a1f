// A signed EasyPost `tracker.updated` event, as EasyPost sends one: the load generator (load.ts) sends
// them by the thousand, the PostgreSQL replay (figures/postgres-replay.ts) sends two to capture the
// statements they cost.
import { createHmac } from 'node:crypto'

/** The body and its X-Hmac-Signature (HMAC-SHA256 of the raw body, keyed with the NFKD-normalized secret). */
export function signedTrackerEvent(secret: string, event: { id: string; trackingCode: string; carrier: string; status: string }) {
  const { id, trackingCode, carrier, status } = event
  const body = JSON.stringify({
    id,
    object: 'Event',
    created_at: new Date().toISOString(),
    description: 'tracker.updated',
    mode: 'test',
    result: {
      id: `trk_${trackingCode}`,
      object: 'Tracker',
      tracking_code: trackingCode,
      carrier,
      status,
      public_url: `https://track.easypost.com/${trackingCode}`,
      tracking_details: [
        {
          object: 'TrackingDetail',
          message: status.replace(/_/g, ' ').toUpperCase(),
          status,
          datetime: new Date().toISOString(),
          tracking_location: { object: 'TrackingLocation', city: 'SAN FRANCISCO', state: 'CA', country: 'US', zip: null },
        },
      ],
    },
  })
  const signature = `hmac-sha256-hex=${createHmac('sha256', Buffer.from(secret.normalize('NFKD'), 'utf8')).update(body, 'utf8').digest('hex')}`
  return { body, signature }
}
