// The demo's mail: a capture transport that keeps sent messages in memory (no mail leaves the machine),
// the notification definition the demo starts with, and the page listing what was "sent".
import type { FastifyInstance } from 'fastify'
import { NOTIFICATION_TEMPLATES, type MailMessage, type NotificationInput, type NotificationTemplateName } from '../src/index.js'

export interface CapturedMail extends MailMessage {
  /** When the transport took it (ISO 8601, UTC). */
  sentAt: string
}

/** How many messages the capture keeps; older ones are dropped, so a long-running demo stays small. */
export const DEMO_MAILBOX_SIZE = 50

/** A `notifications.sendMail` that keeps the newest `size` messages, newest first. */
export function createMailCapture(size = DEMO_MAILBOX_SIZE) {
  const messages: CapturedMail[] = []
  return {
    sendMail: async (message: MailMessage) => {
      messages.unshift({ ...message, to: [...message.to], sentAt: new Date().toISOString() })
      messages.length = Math.min(messages.length, size)
    },
    /** Newest first; a copy, so a page rendering it never races a send. */
    messages: (): CapturedMail[] => [...messages],
  }
}

export type MailCapture = ReturnType<typeof createMailCapture>

export const DEMO_NOTIFICATION: NotificationInput = {
  name: 'Your order has shipped',
  statuses: ['shipped'],
  recipient: 'customer',
  subject: 'Your order {{ order.reference }} has shipped',
  html: `<h1>Your order {{ order.reference }} is on its way</h1>
<p>Shipment {{ shipment.reference }}{% if shipment.carrier %} travels with {{ shipment.carrier }}{% if shipment.trackingNumber %} (tracking number {{ shipment.trackingNumber }}){% endif %}{% endif %}.</p>
{% if items.size > 0 %}<p>In this parcel:</p>
<ul>{% for item in items %}<li>{{ item.quantity }} × {{ item.name }}</li>{% endfor %}</ul>{% endif %}
<p><a href="{{ trackingLink }}">Track your parcel</a></p>
{% if message %}<p>{{ message }}</p>{% endif %}`,
  text: `Your order {{ order.reference }} is on its way.

Shipment {{ shipment.reference }}{% if shipment.carrier %} travels with {{ shipment.carrier }}{% if shipment.trackingNumber %} (tracking number {{ shipment.trackingNumber }}){% endif %}{% endif %}.
{% if items.size > 0 %}
In this parcel:
{% for item in items %}- {{ item.quantity }} x {{ item.name }}
{% endfor %}{% endif %}
Track your parcel: {{ trackingLink }}
{% if message %}
{{ message }}{% endif %}`,
  language: 'en',
}

/** The ready-made return mails the demo starts with, enabled: a customer's return started on the tracking page sends them. */
export const DEMO_RETURN_NOTIFICATIONS = ['returnAuthorised', 'returnReceived'] as const satisfies readonly NotificationTemplateName[]

/** Creates the demo's notifications once each (a definition of that name, kept or edited, is left alone). */
export async function ensureDemoNotification(app: FastifyInstance): Promise<void> {
  const existing = new Set((await app.shipments.notifications.list()).map((notification) => notification.name))
  if (!existing.has(DEMO_NOTIFICATION.name)) await app.shipments.notifications.create(DEMO_NOTIFICATION)
  for (const name of DEMO_RETURN_NOTIFICATIONS) {
    const template = NOTIFICATION_TEMPLATES[name]
    if (!existing.has(template.name)) await app.shipments.notifications.create({ ...template, enabled: true, statuses: [...template.statuses], triggers: [...template.triggers] })
  }
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`)

/**
 * The captured mails: to, subject, time, the HTML in a sandboxed frame (no scripts, no same origin) and
 * the text. The frame's srcdoc inherits the page's policy, which lets a mail's inline styles apply.
 */
export function mailPageBody(messages: CapturedMail[]): string {
  const list = messages
    .map(
      (message) => `<article class="captured-mail" data-mail>
<h2>${escapeHtml(message.subject)}</h2>
<table><tbody>
<tr><th>To</th><td data-mail-to>${escapeHtml(message.to.join(', '))}</td></tr>
<tr><th>Sent</th><td class="meta"><time datetime="${escapeHtml(message.sentAt)}">${escapeHtml(message.sentAt)}</time></td></tr>
<tr><th>Language</th><td>${escapeHtml(message.language ?? '—')}</td></tr>
<tr><th>Message-ID</th><td class="meta">${escapeHtml(message.messageId)}</td></tr>
</tbody></table>
<h3>HTML</h3>
<iframe class="mail-preview" title="${escapeHtml(`HTML of "${message.subject}"`)}" sandbox="" referrerpolicy="no-referrer" srcdoc="${escapeHtml(message.html)}"></iframe>
<h3>Text</h3>
<pre data-mail-text>${escapeHtml(message.text)}</pre>
</article>`,
    )
    .join('\n')
  return `<h1>Sent mail (demo capture)</h1>
<p class="hint">DEMO ONLY: the demo's <code>notifications.sendMail</code> keeps the newest ${DEMO_MAILBOX_SIZE} messages in memory, newest first, and sends nothing.
Ship a shipment (the admin pages or the API) to see the "Your order has shipped" notification arrive; edit it under <a href="/shipments/admin/notifications">Notifications</a>.</p>
${messages.length === 0 ? '<p>No mail yet.</p>' : list}`
}

/**
 * The mail page's policy: nothing but the admin stylesheet and, for the mails in their sandboxed
 * frames, inline styles and images (mail HTML is styled inline). No script runs anywhere.
 */
export const DEMO_MAIL_PAGE_POLICY =
  "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data: https:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
