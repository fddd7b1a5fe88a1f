// The notifications the package offers ready-made: added disabled, for a store admin to read and enable
// (the service checks each as it checks any definition).

const TRACK_HTML = '<p><a href="{{ trackingLink }}">Track your parcel</a></p>'
const TRACK_TEXT = 'Track your parcel: {{ trackingLink }}'
// A return's lines: the order line's name (its id when the order store has no lines) and the quantity.
const RETURN_LINES_HTML = '<ul>{% for line in return.lines %}<li>{{ line.quantity }} × {{ line.name | default: line.lineItemId }}</li>{% endfor %}</ul>\n'
const RETURN_LINES_TEXT = '{% for line in return.lines %}- {{ line.quantity }} x {{ line.name | default: line.lineItemId }}\n{% endfor %}'

export const NOTIFICATION_TEMPLATES = {
  shipped: {
    name: 'Shipped',
    enabled: false,
    statuses: ['shipped'],
    triggers: [],
    recipient: 'customer',
    subject: 'Your order {{ order.reference }} has shipped',
    html: `<p>Your order {{ order.reference }} is on its way{% if shipment.carrier %} with {{ shipment.carrier }}{% endif %}.</p>\n{% if estimatedDelivery %}<p>Expected: {{ estimatedDelivery | date: "%A, %B %-d" }}</p>\n{% endif %}${TRACK_HTML}`,
    text: `Your order {{ order.reference }} is on its way{% if shipment.carrier %} with {{ shipment.carrier }}{% endif %}.\n{% if estimatedDelivery %}Expected: {{ estimatedDelivery | date: "%A, %B %-d" }}\n{% endif %}${TRACK_TEXT}`,
  },
  outForDelivery: {
    name: 'Out for delivery',
    enabled: false,
    statuses: [],
    triggers: ['outForDelivery'],
    recipient: 'customer',
    subject: 'Your order {{ order.reference }} is out for delivery',
    html: `<p>Your order {{ order.reference }} is out for delivery today{% if checkpoint.location %} from {{ checkpoint.location }}{% endif %}.</p>\n${TRACK_HTML}`,
    text: `Your order {{ order.reference }} is out for delivery today{% if checkpoint.location %} from {{ checkpoint.location }}{% endif %}.\n${TRACK_TEXT}`,
  },
  delivered: {
    name: 'Delivered',
    enabled: false,
    statuses: [],
    triggers: ['delivered'],
    recipient: 'customer',
    subject: 'Your order {{ order.reference }} has been delivered',
    html: `<p>Your order {{ order.reference }} has been delivered{% if checkpoint.location %} ({{ checkpoint.location }}){% endif %}.</p>\n{% if checkpoint.signedBy %}<p>Signed for by {{ checkpoint.signedBy }}.</p>\n{% endif %}${TRACK_HTML}`,
    text: `Your order {{ order.reference }} has been delivered{% if checkpoint.location %} ({{ checkpoint.location }}){% endif %}.\n{% if checkpoint.signedBy %}Signed for by {{ checkpoint.signedBy }}.\n{% endif %}${TRACK_TEXT}`,
  },
  problem: {
    name: 'Problem with your delivery',
    enabled: false,
    statuses: [],
    triggers: ['attempted', 'exception', 'returnedToSender', 'estimateLater'],
    recipient: 'customer',
    subject: 'News about the delivery of your order {{ order.reference }}',
    html: `<p>There is news about the delivery of your order {{ order.reference }}:</p>\n<p>{% if trigger == "estimateLater" %}The carrier now expects to deliver it on {{ estimate.to | date: "%A, %B %-d" }}.{% else %}{{ checkpoint.message | default: "The carrier reported a problem." }}{% if checkpoint.location %} ({{ checkpoint.location }}){% endif %}{% endif %}</p>\n${TRACK_HTML}`,
    text: `There is news about the delivery of your order {{ order.reference }}:\n{% if trigger == "estimateLater" %}The carrier now expects to deliver it on {{ estimate.to | date: "%A, %B %-d" }}.{% else %}{{ checkpoint.message | default: "The carrier reported a problem." }}{% if checkpoint.location %} ({{ checkpoint.location }}){% endif %}{% endif %}\n${TRACK_TEXT}`,
  },
  returnAuthorised: {
    name: 'Your return is authorised',
    enabled: false,
    statuses: [],
    triggers: ['returnAuthorised'],
    recipient: 'customer',
    subject: 'Your return {{ return.reference }} for order {{ order.reference }} is authorised',
    html: `<p>We have authorised your return {{ return.reference }} for order {{ order.reference }}:</p>\n${RETURN_LINES_HTML}{% if return.labelUrl %}<p><a href="{{ return.labelUrl }}">Print your return label</a></p>\n{% else %}<p>Please send the items back to us and tell us the tracking number.</p>\n{% endif %}`,
    text: `We have authorised your return {{ return.reference }} for order {{ order.reference }}:\n${RETURN_LINES_TEXT}{% if return.labelUrl %}Print your return label: {{ return.labelUrl }}\n{% else %}Please send the items back to us and tell us the tracking number.\n{% endif %}`,
  },
  returnReceived: {
    name: 'We received your return',
    enabled: false,
    statuses: [],
    triggers: ['returnReceived'],
    recipient: 'customer',
    subject: 'We received your return {{ return.reference }} for order {{ order.reference }}',
    html: `<p>Your return {{ return.reference }} for order {{ order.reference }} has arrived:</p>\n${RETURN_LINES_HTML}<p>We will be in touch about your refund or replacement.</p>`,
    text: `Your return {{ return.reference }} for order {{ order.reference }} has arrived:\n${RETURN_LINES_TEXT}We will be in touch about your refund or replacement.`,
  },
} as const

export type NotificationTemplateName = keyof typeof NOTIFICATION_TEMPLATES
