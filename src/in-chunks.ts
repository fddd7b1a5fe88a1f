// Splitting a list into pieces: big orders' lines written a statement at a time, shipments of bounded size.

/** `list` in consecutive pieces of at most `size` entries (none for an empty list). */
export function inChunks<T>(list: readonly T[], size: number): T[][] {
  const chunks: T[][] = []
  for (let start = 0; start < list.length; start += size) chunks.push(list.slice(start, start + size))
  return chunks
}
