// The Liquid engines of the notification templates that store admins write: sandboxed (no files, no
// includes, own properties only), bounded in time and memory, loaded on first use.
import type { Liquid } from 'liquidjs'
import { onFirstUse } from '../lazy.js'

/** The longest one template may render, in ms: the longest a hostile template holds the event loop. */
export const TEMPLATE_RENDER_LIMIT_MS = 50
/** The characters one template's filters and ranges may allocate (liquidjs `memoryLimit`). */
const TEMPLATE_MEMORY_LIMIT = 1_000_000

/**
 * A Liquid engine for templates that store admins write. It reads no files: `templates` is an empty
 * in-memory set (so no lookup reaches the file system), and `include`, `render` and `layout` are refused
 * when a template is parsed, with a message that says why. It runs no code of theirs, reads only own
 * properties, and the limits bound what one template may cost (characters parsed, time and memory).
 */
function templateEngine(Liquid: typeof import('liquidjs').Liquid, outputEscape: 'escape' | undefined): Liquid {
  const engine = new Liquid({
    templates: {},
    parseLimit: 100_000,
    // Checked between nodes only: one node may overrun the limit by its own cost.
    renderLimit: TEMPLATE_RENDER_LIMIT_MS,
    // Characters that filters and ranges may allocate. It also bounds that one node's cost: with 10
    // million, a single `(1..9999999)` held the event loop for a second before the render limit was
    // checked again; a mail's worth of text stays far below one million.
    memoryLimit: TEMPLATE_MEMORY_LIMIT,
    ownPropertyOnly: true,
    ...(outputEscape ? { outputEscape } : {}),
  })
  for (const tag of ['include', 'render', 'layout']) {
    engine.registerTag(tag, {
      parse() {
        throw new Error(`the "${tag}" tag is not available: notification templates cannot read other templates or files`)
      },
      render() {
        return ''
      },
    })
  }
  return engine
}

/**
 * Renders after yielding to the event loop, so that requests waiting run between templates. Liquid's
 * render limit is wall time: on a loaded machine a mail whose render was preempted ran past it with a
 * few ms of its own work, and failed (a CI run saw it). A render refused for its time while the process
 * spent less than the limit's CPU meanwhile is tried once more; a template that really works that long
 * is refused again.
 */
export async function renderInTurn(engine: Liquid, template: string, scope: object): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    await new Promise<void>((resolve) => setImmediate(resolve))
    const cpuBefore = process.cpuUsage()
    try {
      return await engine.parseAndRender(template, scope)
    } catch (error) {
      const cpu = process.cpuUsage(cpuBefore)
      const preempted = (cpu.user + cpu.system) / 1000 < TEMPLATE_RENDER_LIMIT_MS
      if (attempt > 0 || !preempted || !/render limit exceeded/.test(String((error as Error)?.message))) throw error
    }
  }
}

/** The HTML engine (every output escaped) and the text engine, loaded once per service on first use. */
export function templateEnginesOnFirstUse() {
  // liquidjs is imported with the first template checked or rendered, not with the package. A first
  // render compiles Liquid's own code paths (several ms): done in the load, before a customer's first
  // mail, which would spend part of its render limit on it.
  const engines = onFirstUse('liquidjs for the notification templates', async () => {
    const { Liquid } = await import('liquidjs')
    const html = templateEngine(Liquid, 'escape')
    const text = templateEngine(Liquid, undefined)
    for (const engine of [html, text]) await engine.parseAndRender('{% for item in items %}{{ item.name | upcase }}{% endfor %}{{ a | default: "b" }}', { items: [{ name: 'x' }] }).catch(() => undefined)
    return { html, text }
  })
  return engines
}
