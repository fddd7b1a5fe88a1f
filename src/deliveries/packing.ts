// Packing a shipment's items into boxes: a small Packer interface, and the default one on binpackingjs's
// 3-D packer (pinned: a young rewrite), which respects each box's weight limit. binpackingjs is
// synchronous, and one packing of a few hundred units into a few box types takes seconds, so the
// default packer runs it in a worker thread of its own: the event loop goes on, and a packing stopped
// (its signal aborted: the suggestion's time budget ran out) ends the thread where it stands. The thread
// starts with a packing and ends with it, so a host that never suggests parcels never loads binpackingjs.
import { Worker } from 'node:worker_threads'

/** One unit of an order line, in whole tenths of a millimetre and milligrams. */
export interface PackingItem {
  /** Unique per unit: `<lineItemId>#<n>`. */
  key: string
  lineItemId: number
  length: number
  width: number
  height: number
  weight: number
}

/** A box type, inner size in tenths of a millimetre; `maxContentWeight` in milligrams (its limit less its empty weight). */
export interface PackingBox {
  boxId: number
  length: number
  width: number
  height: number
  maxContentWeight: number
}

export interface PackedBox {
  boxId: number
  keys: string[]
  /** Where each unit sits (for checks): its corner and its size as placed. */
  placements?: Array<{ key: string; position: readonly [number, number, number]; size: readonly [number, number, number] }> | undefined
}

export interface PackingResult {
  boxes: PackedBox[]
  /** Keys of units that fit no box. */
  unpacked: string[]
}

export interface PackOptions {
  /** Aborted when the suggestion's time budget (`deliveries.packingTimeoutMs`) runs out: stop, the answer is no longer awaited. */
  signal?: AbortSignal | undefined
}

/**
 * Packs units into as few boxes as it can; a host may bring its own (the `deliveries.packer` option).
 * It runs in the host's process: work of more than a few milliseconds belongs off the event loop (a
 * worker thread, another service), as the default packer does it.
 */
export interface Packer {
  pack(items: readonly PackingItem[], boxes: readonly PackingBox[], options?: PackOptions): PackingResult | Promise<PackingResult>
}

// The worker is plain CommonJS evaluated from this string, so that it loads the same way from the
// sources (under a TypeScript loader) and from the build; it imports binpackingjs's ES module (its
// CommonJS build exports nothing). One message, one packing with copies of the box types given:
// binpackingjs fills the bins it is given, smallest first.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const loading = import(workerData.binpackingjs)
parentPort.on('message', async ({ items, types }) => {
  const { pack3D } = await loading
  const bins = []
  for (const type of types) {
    for (let copy = 0; copy < items.length; copy++) {
      bins.push({ name: type.boxId + '#' + copy, width: type.width, height: type.height, depth: type.length, maxWeight: type.maxContentWeight })
    }
  }
  const units = items.map((item) => ({ name: item.key, width: item.width, height: item.height, depth: item.length, weight: item.weight }))
  // Whole tenths of a millimetre and milligrams: a factor of 1 keeps them as they are.
  const result = pack3D({ bins, items: units, factor: 1 })
  parentPort.postMessage({
    boxes: result.packedBins
      .filter((bin) => bin.items.length > 0)
      .map((bin) => ({
        boxId: Number(bin.name.split('#')[0]),
        keys: bin.items.map((item) => item.name),
        placements: bin.items.map((item) => ({ key: item.name, position: item.position, size: item.dimension })),
      })),
    unpacked: result.unfitItems.map((item) => item.name),
  })
})
`

/** binpackingjs's module, resolved with the first packing (a resolution reads package files: once is enough). */
let binpackingjs: string | undefined
function resolveBinpackingjs(): string {
  try {
    return (binpackingjs ??= import.meta.resolve('binpackingjs/3d'))
  } catch (error) {
    throw new Error(`fastify-shipments could not load binpackingjs for suggesting parcels: ${(error as Error).message}`, { cause: error })
  }
}

/** A worker thread that packs one candidate at a time; aborting `signal` ends it, and the packing awaited fails with the signal's reason. */
function startPackingWorker(signal: AbortSignal | undefined) {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { binpackingjs: resolveBinpackingjs() } })
  let waiting: { resolve: (result: PackingResult) => void; reject: (error: unknown) => void } | null = null
  let stopped: unknown = null
  const stop = (reason: unknown) => {
    stopped ??= reason
    waiting?.reject(stopped)
    waiting = null
  }
  worker.on('message', (result: PackingResult) => {
    waiting?.resolve(result)
    waiting = null
  })
  worker.on('error', (error) => stop(new Error(`The packing worker failed: ${error.message}`, { cause: error })))
  worker.on('exit', (code) => stop(new Error(`The packing worker stopped (exit code ${code})`)))
  const abort = () => {
    stop(signal!.reason)
    void worker.terminate()
  }
  if (signal?.aborted) abort()
  else signal?.addEventListener('abort', abort, { once: true })
  return {
    pack(items: readonly PackingItem[], types: readonly PackingBox[]): Promise<PackingResult> {
      if (stopped !== null) return Promise.reject(stopped)
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject }
        worker.postMessage({ items, types })
      })
    },
    async close(): Promise<void> {
      signal?.removeEventListener('abort', abort)
      stopped ??= new Error('The packing worker was closed')
      await worker.terminate()
    },
  }
}

const volume = (box: { length: number; width: number; height: number }) => box.length * box.width * box.height
const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0)

/** A packing's score, least is best: units left out, then boxes used, then their volume. */
type Score = readonly [unpacked: number, boxes: number, volume: number]
function compareScores(a: Score, b: Score): number {
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return a[index]! - b[index]!
  return 0
}

const ascendingSides = (box: { length: number; width: number; height: number }) => [box.length, box.width, box.height].sort((a, b) => a - b)

/**
 * The least any packing into copies of `type` alone can score: the units that fit it in no orientation
 * (or weigh more than it holds) stay out, and the others need at least the boxes their volume and
 * weight fill. A real packing leaving as many out packs every other unit, so it scores at least this.
 * `units` carry their sides in ascending order, sorted once for every type.
 */
function leastScore(units: ReadonlyArray<{ sides: number[]; volume: number; weight: number }>, type: PackingBox): Score {
  const inside = ascendingSides(type)
  let fitting = 0
  let fittingVolume = 0
  let fittingWeight = 0
  for (const unit of units) {
    if (unit.weight > type.maxContentWeight || unit.sides[0]! > inside[0]! || unit.sides[1]! > inside[1]! || unit.sides[2]! > inside[2]!) continue
    fitting++
    fittingVolume += unit.volume
    fittingWeight += unit.weight
  }
  const boxes = fitting === 0 ? 0 : Math.max(Math.ceil(fittingVolume / volume(type)), Math.ceil(fittingWeight / type.maxContentWeight))
  return [units.length - fitting, boxes, boxes * volume(type)]
}

/**
 * The default packer: tries all box types together and every type alone, and keeps the packing that
 * leaves the fewest units out, then uses the fewest boxes, then the least box volume (the first of equals,
 * in that order). A type whose least possible score cannot beat the best packing so far is not packed.
 */
export const binPackingPacker: Packer = {
  async pack(items, boxes, options = {}) {
    if (items.length === 0) return { boxes: [], unpacked: [] }
    if (boxes.length === 0) return { boxes: [], unpacked: items.map((item) => item.key) }
    const byId = new Map(boxes.map((box) => [box.boxId, box]))
    const score = (result: PackingResult): Score => [result.unpacked.length, result.boxes.length, sum(result.boxes.map((box) => volume(byId.get(box.boxId)!)))]
    const units = items.map((item) => ({ sides: ascendingSides(item), volume: volume(item), weight: item.weight }))
    const alone = boxes.length > 1 ? boxes.map((box, index) => ({ types: [box], order: index + 1, least: leastScore(units, box) })) : []
    // The most promising types first, so that the best packing so far rules out as many as it can.
    const candidates = [{ types: boxes, order: 0, least: [0, 0, 0] as Score }, ...alone.sort((a, b) => compareScores(a.least, b.least) || a.order - b.order)]
    const worker = startPackingWorker(options.signal)
    try {
      let best: { result: PackingResult; score: Score; order: number } | null = null
      for (const candidate of candidates) {
        if (best && (compareScores(candidate.least, best.score) || candidate.order - best.order) > 0) continue
        const result = await worker.pack(items, candidate.types)
        const candidateScore = score(result)
        if (!best || (compareScores(candidateScore, best.score) || candidate.order - best.order) < 0) best = { result, score: candidateScore, order: candidate.order }
      }
      return best!.result
    } finally {
      await worker.close()
    }
  },
}
