// The customer-facing options: notifications (the host's mail transport) and the public tracking page
// (the links' secret and origin, where it is mounted, its layout, framing, policy and shop name).
import { resolveEnvironmentValue } from '../env.js'
import { TEXT_LIMITS, textProblem } from '../text.js'
import type { NotificationsOptions } from './service.js'
import { standaloneTrackingLayout, type TrackingPageLayout } from './tracking-page-layout.js'

/**
 * The public tracking page: `secret` (at least 32 characters, or an environment reference such as
 * "$TRACKING_SECRET") signs the links, `baseUrl` (the site's origin) makes them absolute for mails,
 * `prefix` (default `/shipments/track`) mounts the page, `layout(page)` wraps it in the host's chrome
 * (default: a standalone page). Not mounted when absent.
 */
export interface TrackingPageOptions {
  secret: string
  baseUrl: string
  prefix?: string | undefined
  layout?: TrackingPageLayout | undefined
  /**
   * Who may show the page in a frame: CSP `frame-ancestors` sources such as `'self'` or
   * `https://shop.example`. Default none: the page cannot be framed (and X-Frame-Options is DENY).
   */
  frameAncestors?: string[] | undefined
  /** The whole Content-Security-Policy header, replacing the package's (for a layout that loads more). */
  contentSecurityPolicy?: string | undefined
  /** The shop's name, shown above the page's heading and in its title (1 to 255 characters). Default none. */
  shopName?: string | undefined
}

export interface ResolvedTrackingPageOptions {
  secret: string
  baseUrl: string
  prefix: string
  layout: TrackingPageLayout
  frameAncestors: string[]
  contentSecurityPolicy: string | null
  shopName: string | null
}

/** The `notifications` option, or null when absent (definitions are kept, nothing is sent). */
export function resolveNotificationsOptions(notifications: unknown, fail: (option: string, reason: string) => never): NotificationsOptions | null {
  const options = notifications === undefined ? null : (notifications as NotificationsOptions)
  if (options !== null && typeof options?.sendMail !== 'function') fail('notifications.sendMail', 'must be a function')
  return options
}

/** The `trackingPage` option, or null when absent (the page is not mounted). */
export function resolveTrackingPageOptions(trackingPage: unknown, fail: (option: string, reason: string) => never): ResolvedTrackingPageOptions | null {
  if (trackingPage === undefined) return null
  const page = trackingPage as { secret?: unknown; baseUrl?: unknown; prefix?: unknown; layout?: unknown; frameAncestors?: unknown; contentSecurityPolicy?: unknown; shopName?: unknown }
  let secret: unknown
  try {
    secret = resolveEnvironmentValue(page?.secret)
  } catch (error) {
    fail('trackingPage.secret', (error as Error).message)
  }
  if (typeof secret !== 'string' || secret.length < 32) fail('trackingPage.secret', 'must be at least 32 characters')
  if (typeof page.baseUrl !== 'string' || !/^https?:\/\/[^/\s]+\/?$/.test(page.baseUrl)) fail('trackingPage.baseUrl', 'must be the site origin, such as "https://shop.example"')
  const prefix = page.prefix ?? '/shipments/track'
  if (typeof prefix !== 'string' || !/^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/.test(prefix)) fail('trackingPage.prefix', 'must be a path such as "/track"')
  if (page.layout !== undefined && typeof page.layout !== 'function') fail('trackingPage.layout', 'must be a function')
  const frameAncestors = page.frameAncestors ?? []
  // One source per entry, no separators: a value cannot end the directive and start another.
  if (!Array.isArray(frameAncestors) || frameAncestors.some((source) => typeof source !== 'string' || !/^[^\s;,]+$/.test(source))) {
    fail('trackingPage.frameAncestors', `must be a list of CSP sources such as "'self'" or "https://shop.example"`)
  }
  const policy = page.contentSecurityPolicy
  if (policy !== undefined && (typeof policy !== 'string' || policy.trim() === '' || /[\r\n]/.test(policy))) fail('trackingPage.contentSecurityPolicy', 'must be a Content-Security-Policy header value on one line')
  const shopName = page.shopName
  if (shopName !== undefined && (typeof shopName !== 'string' || shopName.trim() === '' || textProblem(shopName, { maxLength: TEXT_LIMITS.short }))) {
    fail('trackingPage.shopName', 'must be a text of 1 to 255 characters, without control characters or bidirectional overrides')
  }
  return {
    secret,
    baseUrl: page.baseUrl,
    prefix,
    layout: (page.layout as TrackingPageLayout | undefined) ?? standaloneTrackingLayout,
    frameAncestors: frameAncestors as string[],
    contentSecurityPolicy: (policy as string | undefined) ?? null,
    shopName: (shopName as string | undefined)?.trim() ?? null,
  }
}
