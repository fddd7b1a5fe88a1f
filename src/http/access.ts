// The host's hooks on who is asking: the user a request belongs to, and whether that user holds a
// permission. Every route module takes them; the plugin's options carry them.
import type { FastifyRequest } from 'fastify'
import { ShipmentsErrors } from '../errors.js'

/** The least the package needs of a host user: a stable id for history rows. */
export interface ShipmentsUser {
  id: string | number
}

export type ResolveUser<User extends ShipmentsUser = ShipmentsUser> = (
  request: FastifyRequest,
) => User | null | undefined | Promise<User | null | undefined>

export type HasPermission<User extends ShipmentsUser = ShipmentsUser> = (
  user: User,
  permission: string,
  request: FastifyRequest,
) => boolean | Promise<boolean>

/**
 * The onRequest hooks a route module guards its routes with: `requirePermission(p)` answers 401 without a
 * user and 403 without `p`, and keeps the user so `userIdOf(request)` can name who made a change.
 */
export function permissionHooks(resolveUser: ResolveUser, hasPermission: HasPermission) {
  const users = new WeakMap<FastifyRequest, ShipmentsUser>()
  const requirePermission = (permission: string) => async (request: FastifyRequest) => {
    const user = (await resolveUser(request)) ?? null
    if (!user) throw new ShipmentsErrors.Unauthorized()
    if (!(await hasPermission(user, permission, request))) throw new ShipmentsErrors.Forbidden(permission)
    users.set(request, user)
  }
  const userIdOf = (request: FastifyRequest): string | null => {
    const user = users.get(request)
    return user ? String(user.id) : null
  }
  return { requirePermission, userIdOf }
}
