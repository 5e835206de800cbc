/**
 * Who reads a space: the space of the caller's token, or null for a deployment token. A caller
 * with no token at all is given as `null` reader (see {@link canReadSpace}).
 */
export interface SpaceReader {
  spaceId: number | null;
}

/**
 * Public spaces are read by anyone with a valid token; a private one only by its own tokens and
 * deployment tokens. `reader` null (no token known): public spaces only.
 */
export function canReadSpace(
  reader: SpaceReader | null,
  space: { id: number; isPrivate: boolean },
): boolean {
  if (!space.isPrivate) return true;
  return reader !== null && (reader.spaceId === null || reader.spaceId === space.id);
}
