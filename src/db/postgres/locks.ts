// The advisory-lock keys of the package on PostgreSQL (no driver import: hosts may read them).

/**
 * Advisory locks take two int4 keys: the first names the kind of lock ("SHIP" and its neighbours), the
 * second the object. PostgreSQL keeps two-key locks apart from the one-bigint-key locks most
 * applications use, so the package's locks cannot collide with a host's unless it picks these classes.
 */
export const ADVISORY_LOCK_CLASS = {
  /** The per-shipment transition mutex of spec 3.3; the second key is the shipment id. */
  shipmentTransition: 0x53484950,
  /** Shipment numbering and the order-advance count of one order; the second key is the order id. */
  orderShipments: 0x53484951,
  /** Migrations; the second key is 0. */
  migrate: 0x53484952,
  /** Pushes and cancels of one shipment to integrations; the second key is the shipment id. */
  shipmentPush: 0x53484953,
  /** Outbox claims by the sweep, one instance at a time; the second key is 0. */
  outboxClaim: 0x53484954,
  /** ShipStation notifications with items for one order, one at a time; the second key is the order id. */
  shipNotice: 0x53484955,
  /** Label purchases and voids of one parcel, one at a time; the second key is the parcel id. */
  labelPurchase: 0x53484956,
  /** The label purchase of one return; the second key is the return id. */
  returnLabel: 0x53484957,
  /** A shipment's finish at the pack station ("SHPS"); the second key is the shipment id. */
  packStation: 0x53485053,
} as const
