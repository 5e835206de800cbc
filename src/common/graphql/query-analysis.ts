import {
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  Kind,
  OperationDefinitionNode,
  SelectionSetNode,
  ValueNode,
} from 'graphql';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../leaderboards/page-request';

export interface QueryShape {
  /** Deepest field nesting (introspection fields not counted). */
  depth: number;
  aliases: number;
  /** Fields the response may hold: a paged list counts its page size times its entry's fields. */
  cost: number;
}

/** Fields that return a page of a board: their `list` and `edges` repeat per entry. */
const PAGED_FIELDS = new Set(['loyaltyPointsRanks', 'spaceLoyaltyPointsRanks']);
const PER_ENTRY_FIELDS = new Set(['list', 'edges']);
/** Lists without a page size (a space's sprints): assumed this long. */
const UNPAGED_LIST_FIELDS: Record<string, number> = { sprints: 20 };

/**
 * Measures the operation that will run, with its variables, before anything executes. Depth and
 * aliases bound the work of the GraphQL engine; cost bounds the size of the answer and the rows
 * read (a page of 1000 entries weighs 1000 times its entry).
 */
export function analyzeOperation(
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> = {},
): QueryShape {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION)
      fragments.set(definition.name.value, definition);
  }

  const pageSizeOf = (field: FieldNode): number => {
    const first = field.arguments?.find((arg) => arg.name.value === 'first');
    const value = first ? valueOf(first.value, variables) : undefined;
    if (typeof value !== 'number' || !Number.isFinite(value)) return DEFAULT_PAGE_SIZE;
    return Math.max(1, Math.min(MAX_PAGE_SIZE, Math.trunc(value)));
  };

  const walk = (selectionSet: SelectionSetNode, visiting: Set<string>): QueryShape => {
    const shape: QueryShape = { depth: 0, aliases: 0, cost: 0 };
    const merge = (inner: QueryShape, depthOffset: number, weight: number) => {
      shape.depth = Math.max(shape.depth, inner.depth + depthOffset);
      shape.aliases += inner.aliases;
      shape.cost += inner.cost * weight;
    };
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        merge(walk(selection.selectionSet, visiting), 0, 1);
      } else if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || visiting.has(name)) continue; // validation reports unknown or cyclic ones
        merge(walk(fragment.selectionSet, new Set([...visiting, name])), 0, 1);
      } else {
        const name = selection.name.value;
        if (selection.alias) shape.aliases++;
        if (name.startsWith('__')) continue; // __typename is free; __schema/__type are bounded by the schema
        shape.cost += 1;
        shape.depth = Math.max(shape.depth, 1);
        if (!selection.selectionSet) continue;
        if (PAGED_FIELDS.has(name)) {
          const size = pageSizeOf(selection);
          for (const child of selection.selectionSet.selections) {
            const childSet: SelectionSetNode = { kind: Kind.SELECTION_SET, selections: [child] };
            const perEntry = child.kind === Kind.FIELD && PER_ENTRY_FIELDS.has(child.name.value);
            merge(walk(childSet, visiting), 1, perEntry ? size : 1);
          }
        } else {
          merge(walk(selection.selectionSet, visiting), 1, UNPAGED_LIST_FIELDS[name] ?? 1);
        }
      }
    }
    return shape;
  };

  return walk(operation.selectionSet, new Set());
}

function valueOf(node: ValueNode, variables: Record<string, unknown>): unknown {
  if (node.kind === Kind.INT || node.kind === Kind.FLOAT) return Number(node.value);
  if (node.kind === Kind.VARIABLE) return variables[node.name.value];
  return undefined; // anything else is not a page size; validation reports it
}
