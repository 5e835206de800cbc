import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * Whether the field being resolved selects `path` below it (field names, not aliases), through
 * inline fragments and named fragments. `@skip`/`@include` are not evaluated: a field they may
 * drop counts as selected, so a caller loads at most what it would without this check. Each
 * named fragment is walked once per step, however often it is spread: a document that spreads
 * fragments twice in a chain costs linear time, not exponential.
 */
export function selectsPath(info: GraphQLResolveInfo, path: readonly string[]): boolean {
  let sets: SelectionSetNode[] = [];
  for (const node of info.fieldNodes) if (node.selectionSet) sets.push(node.selectionSet);
  for (const name of path) {
    const next: SelectionSetNode[] = [];
    const walked = new Set<string>();
    for (const set of sets) collect(info, set, name, next, walked);
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
  walked: Set<string>,
): void {
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value === name) into.push(selection.selectionSet ?? EMPTY);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      collect(info, selection.selectionSet, name, into, walked);
    } else if (!walked.has(selection.name.value)) {
      walked.add(selection.name.value);
      const fragment = info.fragments[selection.name.value];
      if (fragment) collect(info, fragment.selectionSet, name, into, walked);
    }
  }
}

const EMPTY: SelectionSetNode = { kind: Kind.SELECTION_SET, selections: [] };
