// What the admin pages add to Fastify's types. In a module of its own, which the package's main module
// names: the routes load only when the pages are mounted, and a host's types see these either way.
import type { ShipmentsUser } from '../http/access.js'
import type { PageContext } from './components.js'

/** The signed-in user of an admin page and what they may do (`request.shipmentsAdmin`). */
export interface ShipmentsAdminRequest {
  user: ShipmentsUser
  can: PageContext['can']
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The permission an admin page needs; pages without one (the assets) are public. */
    shipmentsAdminPermission?: string
  }
  interface FastifyRequest {
    /** The signed-in user and what they may do, inside the admin pages' scope. */
    shipmentsAdmin: ShipmentsAdminRequest | null
  }
}
