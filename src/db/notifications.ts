// The data-layer contract of customer notification definitions and tracking link versions.

/** A stored customer notification definition. */
export interface NotificationRow {
  id: number
  name: string
  enabled: boolean
  statuses: string[]
  /** Carrier milestones whose scan sends it. */
  triggers: string[]
  recipient: string
  addresses: string[]
  subject: string
  html: string
  text: string
  language: string | null
  createdAt: Date
  updatedAt: Date
}

export type NotificationValues = Omit<NotificationRow, 'id' | 'createdAt'>

/** Customer notification definitions and the shipments' public tracking link versions. */
export interface NotificationStore {
  list(): Promise<NotificationRow[]>
  find(id: number): Promise<NotificationRow | undefined>
  insert(values: NotificationValues): Promise<NotificationRow>
  update(id: number, values: Partial<NotificationValues>): Promise<NotificationRow | undefined>
  remove(id: number): Promise<boolean>
  /** The version a shipment's tracking link is signed with (0 until revoked once). */
  trackingLinkVersion(shipmentId: number): Promise<number>
  /** Raises the version, so every link signed before stops working; returns the new one. */
  revokeTrackingLink(shipmentId: number): Promise<number>
}
