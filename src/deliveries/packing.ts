// Packing a shipment's items into boxes: a small Packer interface, and the default one on binpackingjs's
// 3-D packer (pinned: a young rewrite), which respects each box's weight limit. binpackingjs loads with
// the first packing, so a host that never suggests parcels never loads it.
import { onFirstUse } from '../lazy.js'

// binpackingjs 4.1's declaration files import their neighbours without extensions, which NodeNext
// cannot follow: its types come through as `any`, so the parts used here are declared again.
interface Bin3D {
  name: string
  width: number
  height: number
  depth: number
  maxWeight: number
}
interface Item3D {
  name: string
  width: number
  height: number
  depth: number
  weight: number
}
interface Pack3DResult {
  packedBins: ReadonlyArray<Bin3D & { items: ReadonlyArray<Item3D & { position: readonly [number, number, number]; dimension: readonly [number, number, number] }> }>
  unfitItems: readonly Item3D[]
}
type Pack3D = (options: { bins: Bin3D[]; items: Item3D[]; factor?: number }) => Pack3DResult
const loadPack3D = onFirstUse('binpackingjs for suggesting parcels', async () => (await import('binpackingjs/3d')).pack3D as Pack3D)

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

/** Packs units into as few boxes as it can; a host may bring its own (the `deliveries.packer` option). */
export interface Packer {
  pack(items: readonly PackingItem[], boxes: readonly PackingBox[]): PackingResult | Promise<PackingResult>
}

/** One packing with copies of `types`: binpackingjs fills the bins it is given, smallest first. */
function packWith(pack3D: Pack3D, items: readonly PackingItem[], types: readonly PackingBox[]): PackingResult {
  const bins: Bin3D[] = []
  for (const type of types) {
    for (let copy = 0; copy < items.length; copy++) {
      bins.push({ name: `${type.boxId}#${copy}`, width: type.width, height: type.height, depth: type.length, maxWeight: type.maxContentWeight })
    }
  }
  const units: Item3D[] = items.map((item) => ({ name: item.key, width: item.width, height: item.height, depth: item.length, weight: item.weight }))
  // Whole tenths of a millimetre and milligrams: a factor of 1 keeps them as they are.
  const result = pack3D({ bins, items: units, factor: 1 })
  return {
    boxes: result.packedBins
      .filter((bin) => bin.items.length > 0)
      .map((bin) => ({
        boxId: Number(bin.name.split('#')[0]),
        keys: bin.items.map((item) => item.name),
        placements: bin.items.map((item) => ({ key: item.name, position: item.position, size: item.dimension })),
      })),
    unpacked: result.unfitItems.map((item) => item.name),
  }
}

const volume = (box: PackingBox) => box.length * box.width * box.height

/**
 * The default packer: tries every box type alone and all together, and keeps the packing that leaves the
 * fewest units out, then uses the fewest boxes, then the least box volume.
 */
export const binPackingPacker: Packer = {
  async pack(items, boxes) {
    if (items.length === 0) return { boxes: [], unpacked: [] }
    if (boxes.length === 0) return { boxes: [], unpacked: items.map((item) => item.key) }
    const byId = new Map(boxes.map((box) => [box.boxId, box]))
    const pack3D = await loadPack3D()
    const candidates = [boxes, ...(boxes.length > 1 ? boxes.map((box) => [box]) : [])].map((types) => packWith(pack3D, items, types))
    const score = (result: PackingResult) => [result.unpacked.length, result.boxes.length, result.boxes.reduce((sum, box) => sum + volume(byId.get(box.boxId)!), 0)]
    return candidates.reduce((best, next) => {
      const [a, b] = [score(best), score(next)]
      for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return b[index] < a[index] ? next : best
      return best
    })
  },
}
