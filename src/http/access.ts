// The host's hooks on who is asking: the user a request belongs to, and whether that user holds a
// permission. Every route module takes them; the plugin's options carry them.
import type { FastifyRequest } from 'fastify'

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
