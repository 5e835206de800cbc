import { QUERY_PATH } from '../app.module';
import { GRAPHQL_PATH } from './route-spans';
import {
  graphqlOperationOf,
  MAX_STATEMENT_CHARS,
  redactQueryValues,
  statementText,
  statementVerb,
} from './span-text';

describe('what spans say', () => {
  it('keeps a statement as written, cut when very long', () => {
    expect(statementText('SELECT id FROM spaces WHERE id = ?')).toBe(
      'SELECT id FROM spaces WHERE id = ?',
    );
    const bulk = `INSERT INTO t (a, b) VALUES ${Array(2000).fill('(?, ?)').join(', ')}`;
    expect(statementText(bulk)).toHaveLength(MAX_STATEMENT_CHARS + 1);
    expect(statementText(bulk).endsWith('…')).toBe(true);
  });

  it('names a statement by its first word', () => {
    expect(statementVerb('\n  select 1')).toBe('SELECT');
    expect(statementVerb('BEGIN TRANSACTION')).toBe('BEGIN');
    expect(statementVerb('  (SELECT 1)')).toBe('SQL');
  });

  it('keeps query string names and drops their values', () => {
    expect(redactQueryValues('spaceId=7&token=secret&token=again')).toBe(
      'spaceId=REDACTED&token=REDACTED&token=REDACTED',
    );
    expect(redactQueryValues('')).toBe('');
  });

  it('reads the GraphQL operation from the name sent or the head of the document', () => {
    expect(
      graphqlOperationOf({ query: 'query Board($id: Int!) { space(id: $id) { id } }' }),
    ).toEqual({ type: 'query', name: 'Board' });
    expect(graphqlOperationOf({ query: '# a comment\n, mutation Go { x }' })).toEqual({
      type: 'mutation',
      name: 'Go',
    });
    expect(graphqlOperationOf({ query: '{ space(id: 1) { id } }' })).toEqual({ type: 'query' });
    expect(
      graphqlOperationOf({ query: 'query A { a } query B { b }', operationName: 'B' }),
    ).toEqual({ name: 'B' });
    expect(graphqlOperationOf({ query: 'query A { a }', operationName: 'A' })).toEqual({
      type: 'query',
      name: 'A',
    });
  });

  it('reads nothing from arguments, and nothing from a body that is not a request', () => {
    expect(
      graphqlOperationOf({ query: '{ space(id: 1) { q: quest(id: "query Leak") { id } } }' }),
    ).toEqual({ type: 'query' });
    expect(graphqlOperationOf({ query: 'fragment F on Space { id } query Late { x }' })).toEqual(
      {},
    );
    expect(graphqlOperationOf({ operationName: 'not a name!' })).toEqual({});
    expect(graphqlOperationOf('query A { a }')).toEqual({});
    expect(graphqlOperationOf(null)).toEqual({});
  });

  it('looks for the GraphQL route where the host serves it', () => {
    expect(GRAPHQL_PATH).toBe(QUERY_PATH);
  });
});
