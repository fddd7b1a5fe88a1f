// LIKE patterns from user text: the wildcards it contains are matched literally (ESCAPE '\').

/** A "contains" pattern for `text`, with %, _ and \ escaped by a backslash. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`
}
