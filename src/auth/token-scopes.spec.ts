import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import {
  asScopeList,
  DEFAULT_TOKEN_SCOPES,
  hasScope,
  insufficientScope,
  parseTokenScopes,
  TOKEN_SCOPES,
} from './token-scopes';

function refusal(input: unknown): LoyaltyException {
  try {
    parseTokenScopes(input);
  } catch (error) {
    if (error instanceof LoyaltyException) return error;
    throw error;
  }
  throw new Error(`${JSON.stringify(input)} was accepted`);
}

describe('token scopes', () => {
  it('are query and ingest, and query alone by default', () => {
    expect([...TOKEN_SCOPES]).toEqual(['query', 'ingest']);
    expect([...DEFAULT_TOKEN_SCOPES]).toEqual(['query']);
  });

  describe('parseTokenScopes', () => {
    it.each([
      [['query'], ['query']],
      [['ingest'], ['ingest']],
      [
        ['query', 'ingest'],
        ['ingest', 'query'],
      ],
      [
        ['ingest', 'query'],
        ['ingest', 'query'],
      ],
      [['query', 'query'], ['query']],
      [
        ['ingest', 'query', 'ingest', 'query'],
        ['ingest', 'query'],
      ],
    ])('accepts %j as %j: duplicates collapse, sorted as stored', (input, expected) => {
      expect(parseTokenScopes(input)).toEqual(expected);
    });

    it('returns a new list, never the input', () => {
      const input = ['query'];
      const parsed = parseTokenScopes(input);
      expect(parsed).not.toBe(input);
    });

    it.each([
      ['an unknown scope', ['admin'], '"admin"'],
      ['an unknown scope beside known ones', ['query', 'write'], '"write"'],
      ['another letter case', ['Query'], '"Query"'],
      ['surrounding whitespace', [' query'], '" query"'],
      ['an empty name', [''], '""'],
      ['a number', [42], '42'],
      ['null', [null], 'null'],
      ['a nested list', [['query']], '["query"]'],
    ])('refuses %s, naming it and the allowed scopes', (_label, input, shown) => {
      const error = refusal(input);
      expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(error.message).toBe(`Unknown token scope ${shown}: the scopes are query, ingest`);
    });

    it('keeps a long unknown scope short in the message', () => {
      const error = refusal(['x'.repeat(5000)]);
      expect(error.message.length).toBeLessThan(120);
      expect(error.message).toContain('query, ingest');
    });

    it('refuses an empty list', () => {
      const error = refusal([]);
      expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(error.message).toBe('A token needs at least one scope (query, ingest)');
    });

    it.each([
      ['a string', 'query'],
      ['a comma-separated string', 'query,ingest'],
      ['null', null],
      ['undefined', undefined],
      ['an object', { query: true }],
      ['a number', 1],
    ])('refuses %s that is not a list', (_label, input) => {
      const error = refusal(input);
      expect(error.code).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(error.message).toBe('scopes must be a list of token scopes (query, ingest)');
    });
  });

  describe('checks', () => {
    it('hasScope tells whether a token was given a scope', () => {
      expect(hasScope({ scopes: ['query'] }, 'query')).toBe(true);
      expect(hasScope({ scopes: ['query'] }, 'ingest')).toBe(false);
      expect(hasScope({ scopes: ['ingest'] }, 'query')).toBe(false);
      expect(hasScope({ scopes: ['ingest', 'query'] }, 'ingest')).toBe(true);
      expect(hasScope({ scopes: [] }, 'query')).toBe(false);
    });

    it('insufficientScope is 403 INSUFFICIENT_SCOPE naming the scope', () => {
      const error = insufficientScope('ingest');
      expect(error).toBeInstanceOf(LoyaltyException);
      expect(error.message).toBe("Access token lacks the 'ingest' scope");
      expect(error.extensions).toEqual({
        code: 'INSUFFICIENT_SCOPE',
        category: 'AUTHENTICATION',
        http_status: 403,
      });
    });
  });

  describe('the column transformer', () => {
    it('stores a sorted, comma-separated list without duplicates', () => {
      expect(asScopeList.to(['query'])).toBe('query');
      expect(asScopeList.to(['query', 'ingest'])).toBe('ingest,query');
      expect(asScopeList.to(['query', 'ingest', 'query'])).toBe('ingest,query');
      expect(asScopeList.to(undefined)).toBeUndefined();
    });

    it('reads it back, dropping names this version does not know', () => {
      expect(asScopeList.from('query')).toEqual(['query']);
      expect(asScopeList.from('ingest,query')).toEqual(['ingest', 'query']);
      expect(asScopeList.from('query,ingest')).toEqual(['ingest', 'query']);
      expect(asScopeList.from('admin,query')).toEqual(['query']);
      expect(asScopeList.from('')).toEqual([]);
      expect(asScopeList.from(null)).toEqual([]);
    });
  });
});
