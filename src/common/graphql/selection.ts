import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * Whether the field being resolved selects `path` below it (field names, not aliases), through
 * inline fragments and named fragments. `@skip`/`@include` are not evaluated: a field they may
 * drop counts as selected, so a caller loads at most what it would without this check.
 */
export function selectsPath(info: GraphQLResolveInfo, path: readonly string[]): boolean {
  let sets: SelectionSetNode[] = [];
  for (const node of info.fieldNodes) if (node.selectionSet) sets.push(node.selectionSet);
  for (const name of path) {
    const next: SelectionSetNode[] = [];
    for (const set of sets) collect(info, set, name, next, 0);
    if (next.length === 0) return false;
    sets = next;
  }
  return true;
}

/** Selection sets of the fields called `name` in `set` (with an empty one for a leaf). */
function collect(
  info: GraphQLResolveInfo,
  set: SelectionSetNode,
  name: string,
  into: SelectionSetNode[],
  depth: number,
): void {
  // Validation refuses fragment cycles; the bound only guards against a document that skipped it.
  if (depth > 32) return;
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value === name) into.push(selection.selectionSet ?? EMPTY);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      collect(info, selection.selectionSet, name, into, depth + 1);
    } else {
      const fragment = info.fragments[selection.name.value];
      if (fragment) collect(info, fragment.selectionSet, name, into, depth + 1);
    }
  }
}

const EMPTY: SelectionSetNode = { kind: Kind.SELECTION_SET, selections: [] };
