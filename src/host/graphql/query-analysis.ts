import {
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  Kind,
  OperationDefinitionNode,
  SelectionSetNode,
  ValueNode,
} from 'graphql';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../leaderboards/paging/page-request';
import { DEFAULT_CAMPAIGN_PAGE, MAX_CAMPAIGN_PAGE } from '../../quests/campaigns/campaign-list';
import type { IntrospectionWeights } from './introspection-weights';

export interface QueryShape {
  /** Deepest field nesting (introspection fields not counted). */
  depth: number;
  aliases: number;
  /** Fields the response may hold: a paged list counts its page size times its entry's fields. */
  cost: number;
  /** Answers of `__schema` and of `__type` the response holds (each alias is one more). */
  introspection: { schema: number; type: number };
}

/** What an analysis read besides the document (see analyzeOperation's `reads`). */
export interface AnalysisReads {
  /** Set when a page size came from a variable: the shape holds for these variables only. */
  variables: boolean;
}

/** Fields that return a page of a board: their `list` and `edges` repeat per entry. */
const PAGED_FIELDS = new Set(['loyaltyPointsRanks', 'spaceLoyaltyPointsRanks']);
/** Pages sized by `input.first` (the galxe profile's campaign lists): their default and maximum. */
const INPUT_PAGED_FIELDS: Record<string, { size: number; max: number }> = {
  campaigns: { size: DEFAULT_CAMPAIGN_PAGE, max: MAX_CAMPAIGN_PAGE },
};
/**
 * What a field reads besides what it answers: a campaign list reads every quest of its space
 * before it filters and pages them, so each one weighs as much as a board page of 1,000 entries
 * (nested lists of lists would otherwise read a space's quests thousands of times for little cost).
 */
export const READ_COSTS: Record<string, number> = { campaigns: 1_000 };
const PER_ENTRY_FIELDS = new Set(['list', 'edges']);
/** Lists without a page size (a space's sprints): assumed this long. */
const UNPAGED_LIST_FIELDS: Record<string, number> = { sprints: 20 };

/**
 * Measures the operation that will run, with its variables, before anything executes. Depth and
 * aliases bound the work of the GraphQL engine; cost bounds the size of the answer and the rows
 * read (a page of 1000 entries weighs 1000 times its entry). Fragments, inline or named, count
 * exactly as if their fields were written in place. Introspection costs what its answer holds:
 * each of its lists weighs the items it has in the schema (`introspection`, from
 * introspectionWeights; a list it does not name counts one item). `reads.variables` is set when
 * the shape depends on the variables.
 */
export function analyzeOperation(
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown> = {},
  introspection: IntrospectionWeights = {},
  reads: AnalysisReads = { variables: false },
): QueryShape {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION)
      fragments.set(definition.name.value, definition);
  }
  const defaults = new Map<string, unknown>();
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.defaultValue)
      defaults.set(definition.variable.name.value, valueOf(definition.defaultValue, {}, reads));
  }

  /** `input.first` of a campaign list, from an object literal or a variable, else the default. */
  const inputPageSizeOf = (field: FieldNode, { size, max }: { size: number; max: number }) => {
    const input = field.arguments?.find((arg) => arg.name.value === 'input')?.value;
    let value: unknown = undefined;
    if (input?.kind === Kind.VARIABLE) {
      reads.variables = true;
      const given = variables[input.name.value] ?? defaults.get(input.name.value);
      value = (given as { first?: unknown } | null | undefined)?.first;
    } else if (input?.kind === Kind.OBJECT) {
      const first = input.fields.find((f) => f.name.value === 'first');
      if (first) value = valueOf(first.value, variables, reads);
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) return size;
    return Math.max(1, Math.min(max, Math.trunc(value)));
  };

  const pageSizeOf = (field: FieldNode): number => {
    const byInput = INPUT_PAGED_FIELDS[field.name.value];
    if (byInput) return inputPageSizeOf(field, byInput);
    const first = field.arguments?.find((arg) => arg.name.value === 'first');
    let value: unknown = undefined;
    if (first?.value.kind === Kind.VARIABLE) {
      const name = first.value.name.value;
      reads.variables = true;
      value = variables[name] !== undefined ? variables[name] : defaults.get(name);
    } else if (first) {
      value = valueOf(first.value, variables, reads);
    }
    if (typeof value !== 'number' || !Number.isFinite(value)) return DEFAULT_PAGE_SIZE;
    return Math.max(1, Math.min(MAX_PAGE_SIZE, Math.trunc(value)));
  };

  /**
   * A named fragment's measure, computed once per `key`: a fragment spread twice in each of a
   * chain of fragments would otherwise be walked 2^n times. `visiting` only stops cycles, which
   * validation refuses anyway.
   */
  const memo = new Map<string, unknown>();
  const once = <T>(key: string, measure: () => T): T => {
    if (!memo.has(key)) memo.set(key, measure());
    return memo.get(key) as T;
  };

  /** Aliases anywhere below, fragments included (for introspection, which has no depth here). */
  const aliasesIn = (selectionSet: SelectionSetNode | undefined, visiting: Set<string>): number => {
    let count = 0;
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        count += (selection.alias ? 1 : 0) + aliasesIn(selection.selectionSet, visiting);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        count += aliasesIn(selection.selectionSet, visiting);
      } else if (!visiting.has(selection.name.value)) {
        const name = selection.name.value;
        count += once(`aliases:${name}`, () =>
          aliasesIn(fragments.get(name)?.selectionSet, new Set([...visiting, name])),
        );
      }
    }
    return count;
  };

  /** The fields an introspection answer holds below `selectionSet`, lists weighed by the schema. */
  const introspectionCost = (
    selectionSet: SelectionSetNode | undefined,
    visiting: Set<string>,
  ): number => {
    let cost = 0;
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        cost += introspectionCost(selection.selectionSet, visiting);
      } else if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const name = selection.name.value;
        if (visiting.has(name)) continue;
        cost += once(`introspection:${name}`, () =>
          introspectionCost(fragments.get(name)?.selectionSet, new Set([...visiting, name])),
        );
      } else if (selection.name.value !== '__typename') {
        const inner = introspectionCost(selection.selectionSet, visiting);
        const items = introspection[selection.name.value];
        cost += 1 + (items === undefined ? inner : items * Math.max(1, inner));
      }
    }
    return cost;
  };
  // Response keys: a selection repeated under one key is answered once.
  const schemaKeys = new Set<string>();
  const typeKeys = new Set<string>();

  /** `pageSize` is set while walking the direct selections of a paged field. */
  const walk = (
    selectionSet: SelectionSetNode,
    visiting: Set<string>,
    pageSize?: number,
  ): Omit<QueryShape, 'introspection'> => {
    const shape = { depth: 0, aliases: 0, cost: 0 };
    const merge = (inner: typeof shape, depthOffset: number, weight: number) => {
      shape.depth = Math.max(shape.depth, inner.depth + depthOffset);
      shape.aliases += inner.aliases;
      shape.cost += inner.cost * weight;
    };
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        merge(walk(selection.selectionSet, visiting, pageSize), 0, 1);
        continue;
      }
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || visiting.has(name)) continue; // validation reports unknown or cyclic ones
        const inner = once(`walk:${name}:${pageSize ?? ''}`, () =>
          walk(fragment.selectionSet, new Set([...visiting, name]), pageSize),
        );
        merge(inner, 0, 1);
        continue;
      }
      const name = selection.name.value;
      if (selection.alias) shape.aliases++;
      if (name.startsWith('__')) {
        // __typename is free; __schema and __type cost what they answer, and have no depth here
        // (graphql-js's MaxIntrospectionDepthRule bounds their nesting).
        if (name !== '__typename') {
          shape.cost += Math.ceil(1 + introspectionCost(selection.selectionSet, visiting));
          shape.aliases += aliasesIn(selection.selectionSet, visiting);
          const key = selection.alias?.value ?? name;
          if (name === '__schema') schemaKeys.add(key);
          else typeKeys.add(key);
        }
        continue;
      }
      const weight =
        pageSize !== undefined && PER_ENTRY_FIELDS.has(name)
          ? pageSize
          : (UNPAGED_LIST_FIELDS[name] ?? 1);
      const inner = selection.selectionSet
        ? walk(
            selection.selectionSet,
            visiting,
            PAGED_FIELDS.has(name) || name in INPUT_PAGED_FIELDS
              ? pageSizeOf(selection)
              : undefined,
          )
        : { depth: 0, aliases: 0, cost: 0 };
      shape.depth = Math.max(shape.depth, inner.depth + 1);
      shape.aliases += inner.aliases;
      shape.cost += (1 + (READ_COSTS[name] ?? 0) + inner.cost) * weight;
    }
    return shape;
  };

  const shape = walk(operation.selectionSet, new Set());
  return { ...shape, introspection: { schema: schemaKeys.size, type: typeKeys.size } };
}

function valueOf(
  node: ValueNode,
  variables: Record<string, unknown>,
  reads: AnalysisReads,
): unknown {
  if (node.kind === Kind.INT || node.kind === Kind.FLOAT) return Number(node.value);
  if (node.kind === Kind.VARIABLE) {
    reads.variables = true;
    return variables[node.name.value];
  }
  return undefined; // anything else is not a page size; validation reports it
}
