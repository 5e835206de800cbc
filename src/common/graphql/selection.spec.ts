import { Kind, parse, type FragmentDefinitionNode, type GraphQLResolveInfo } from 'graphql';
import { selectsPath } from './selection';

/** The info of the first root field of `document`, as graphql-js hands it to a resolver. */
function infoOf(document: string, maxLookups = Infinity): GraphQLResolveInfo {
  const parsed = parse(document);
  const fragments: Record<string, FragmentDefinitionNode> = {};
  let fieldNodes: unknown[] = [];
  for (const definition of parsed.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
    else if (definition.kind === Kind.OPERATION_DEFINITION)
      fieldNodes = [definition.selectionSet.selections[0]];
  }
  // Counted, so that a walk gone exponential fails at once instead of running for hours.
  let lookups = 0;
  const counted = new Proxy(fragments, {
    get(target, name) {
      if (++lookups > maxLookups) throw new Error(`more than ${maxLookups} fragment lookups`);
      return target[name as string];
    },
  });
  return { fieldNodes, fragments: counted } as unknown as GraphQLResolveInfo;
}

describe('selectsPath', () => {
  it('finds a path through fields, aliases, inline and named fragments', () => {
    const info = infoOf(`{ page { ...P } }
      fragment P on Page { shown: list { ... on Rank { ...R } } }
      fragment R on Rank { address { id } }`);
    expect(selectsPath(info, ['list', 'address'])).toBe(true);
    expect(selectsPath(info, ['list', 'address', 'id'])).toBe(true);
    expect(selectsPath(info, ['edges', 'node', 'address'])).toBe(false);
    expect(selectsPath(info, ['list', 'rank'])).toBe(false);
    expect(selectsPath(infoOf('{ page { list { rank } } }'), ['list', 'address'])).toBe(false);
  });

  it('walks a chain of fragments each spread twice in linear time', () => {
    // 2^40 walks if every spread were followed: this returns at once or not at all.
    const chain = Array.from(
      { length: 40 },
      (_, i) => `fragment F${i} on Page { ...F${i + 1} ...F${i + 1} }`,
    ).join('\n');
    // Each of the 41 fragments looked up once per step of the path (2 steps at most).
    const info = infoOf(`{ page { ...F0 } }\n${chain}\nfragment F40 on Page { __typename }`, 100);
    expect(selectsPath(info, ['list', 'address'])).toBe(false);
    const found = infoOf(
      `{ page { ...F0 } }\n${chain}\nfragment F40 on Page { list { address { id } } }`,
      100,
    );
    expect(selectsPath(found, ['list', 'address'])).toBe(true);
  });
});
