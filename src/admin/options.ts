// The `admin` option: where the store admins' pages are mounted, where users log in, the host's layout.
import type { FastifyRequest } from 'fastify'
import type { SafeHtml } from '../html.js'
import type { ShipmentsUser } from '../http/access.js'

/** What a layout receives: the page's parts, ready to place inside the host's own chrome. */
export interface AdminPage<User extends ShipmentsUser = ShipmentsUser> {
  /** The page title, plain text (escape it). */
  title: string
  /** Markup for `<head>`: the package's stylesheet and script (CSP: no inline script). */
  head: string
  /** The page's markup, escaped already. */
  content: string
  /**
   * Links to the admin screens the user may open: `{ label, href, current, count? }`. `count` (the
   * attention list's size) is a number to show beside the label, as a badge.
   */
  navigation: Array<{ label: string; href: string; current: boolean; count?: number | undefined }>
  user: User
  request: FastifyRequest
}

/** Returns the whole HTML document (`<!DOCTYPE html>...`) with the page inside the host's panel chrome. */
export type AdminLayout<User extends ShipmentsUser = ShipmentsUser> = (page: AdminPage<User>) => string | Promise<string>

export interface AdminOptions<User extends ShipmentsUser = ShipmentsUser> {
  /** Where the pages are mounted. Default '/shipments/admin'. */
  prefix?: string | undefined
  /**
   * Where a request without a user is sent (303), with `returnTo` (the page asked for) added to its
   * query. Default '/login'.
   */
  loginUrl?: string | undefined
  /** Wraps every page in the host's panel chrome. Default: a standalone page. */
  layout?: AdminLayout<User> | undefined
  /**
   * The key of the CSRF tokens' HMAC (at least 32 characters). Tokens are bound to the user; hosts
   * running several instances set the same key on each. Default: a random key per process.
   */
  csrfKey?: string | undefined
  /**
   * What identifies the user's login session (a value that changes at every login, such as a hash of
   * the host's session id; never the session's secret itself, though only its HMAC leaves the
   * server), so that a CSRF token dies with the session it was made in: after a logout and a new
   * login, a token kept from before is refused. Null or undefined: tokens are bound to the user only.
   * Synchronous; called for every admin page and form. Default: none.
   */
  csrfSession?: ((request: FastifyRequest) => string | null | undefined) | undefined
  /**
   * The display name of the user with this id (the id history rows record), for "by Jane" in a
   * shipment's history; null (or a failure, which is logged) shows the id. Default: the id.
   */
  userName?: ((userId: string) => string | null | Promise<string | null>) | undefined
}

export interface ResolvedAdminOptions {
  prefix: string
  loginUrl: string
  layout: AdminLayout | null
  csrfKey: string | null
  csrfSession: ((request: FastifyRequest) => string | null | undefined) | null
  userName: ((userId: string) => string | null | Promise<string | null>) | null
}

/** Checks the admin option; `[option, reason]` is thrown as the plugin's InvalidOption. */
export function resolveAdminOptions(raw: unknown, fail: (option: string, reason: string) => never): ResolvedAdminOptions {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('admin', 'must be an object')
  const { prefix = '/shipments/admin', loginUrl = '/login', layout, csrfKey, csrfSession, userName, ...rest } = raw as Record<string, unknown>
  const unknown = Object.keys(rest)[0]
  if (unknown !== undefined) fail(`admin.${unknown}`, 'is not an option of the admin pages')
  if (typeof prefix !== 'string' || !/^(\/[^/?#]+)+$/.test(prefix)) fail('admin.prefix', 'must be a path such as "/shipments/admin"')
  // A relative or absolute URL of the host's; never a scheme-relative one (//evil.example).
  if (typeof loginUrl !== 'string' || !(/^\/(?!\/)[^\s]*$/.test(loginUrl) || /^https?:\/\/[^\s]+$/i.test(loginUrl))) {
    fail('admin.loginUrl', 'must be a path such as "/login" or an http(s) URL')
  }
  if (layout !== undefined && typeof layout !== 'function') fail('admin.layout', 'must be a function returning the page HTML')
  if (csrfKey !== undefined && (typeof csrfKey !== 'string' || csrfKey.length < 32)) fail('admin.csrfKey', 'must be a string of at least 32 characters')
  if (csrfSession !== undefined && typeof csrfSession !== 'function') fail('admin.csrfSession', "must be a function returning the request's session identifier")
  if (userName !== undefined && typeof userName !== 'function') fail('admin.userName', "must be a function returning the user's display name")
  return {
    prefix,
    loginUrl,
    layout: (layout as AdminLayout | undefined) ?? null,
    csrfKey: (csrfKey as string | undefined) ?? null,
    csrfSession: (csrfSession as ResolvedAdminOptions['csrfSession'] | undefined) ?? null,
    userName: (userName as ResolvedAdminOptions['userName'] | undefined) ?? null,
  }
}

export type { SafeHtml }

/** No inline script or style anywhere: the package's own files only (forms post to the same site). */
export const ADMIN_CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'self'; base-uri 'none'"

/**
 * The cookie holding the admin pages' CSRF secret (path: the admin prefix). A host clears it at logout
 * (`reply.clearCookie(ADMIN_CSRF_COOKIE, { path: prefix })`), so the next login starts with a new secret.
 */
export const ADMIN_CSRF_COOKIE = 'shipments_admin_csrf'
