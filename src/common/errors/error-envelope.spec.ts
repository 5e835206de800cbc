import type { GraphQLFormattedError } from 'graphql';
import { ERROR_DEFINITIONS, ErrorCode } from './error-code';
import { envelopeFor, stripSuggestions, toErrorEnvelope } from './error-envelope';

const ISO_8601_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function expectRecentTimestamp(value: unknown): void {
  expect(typeof value).toBe('string');
  expect(value).toMatch(ISO_8601_UTC);
  const ms = Date.parse(value as string);
  expect(new Date(ms).toISOString()).toBe(value);
  expect(Math.abs(Date.now() - ms)).toBeLessThan(60_000);
}

describe('toErrorEnvelope', () => {
  describe('our own codes', () => {
    it('keeps SPACE_NOT_FOUND with its message, category NOT_FOUND and http_status 200', () => {
      const out = toErrorEnvelope({
        message: 'Space not found',
        path: ['space'],
        locations: [{ line: 1, column: 3 }],
        extensions: { code: 'SPACE_NOT_FOUND', stacktrace: ['at x (/app/src/x.ts:1:1)'] },
      });
      expect(out.message).toBe('Space not found');
      expect(out.path).toEqual(['space']);
      expect(out.locations).toEqual([{ line: 1, column: 3 }]);
      expect(out.extensions).toMatchObject({
        code: 'SPACE_NOT_FOUND',
        category: 'NOT_FOUND',
        http_status: 200,
      });
      expect(out.extensions).not.toHaveProperty('stacktrace');
      expectRecentTimestamp(out.extensions?.timestamp);
    });

    it.each(
      (Object.keys(ERROR_DEFINITIONS) as ErrorCode[])
        .filter((code) => code !== ErrorCode.INTERNAL_SERVER_ERROR)
        .map((code) => [code, ERROR_DEFINITIONS[code]] as const),
    )('maps %s to its category and status, keeping the message', (code, definition) => {
      const out = toErrorEnvelope({ message: `custom ${code}`, extensions: { code } });
      expect(out.message).toBe(`custom ${code}`);
      expect(out.extensions).toMatchObject({
        code,
        category: definition.category,
        http_status: definition.httpStatus,
      });
    });

    it('keeps a specific INVALID_ARGUMENT message', () => {
      const out = toErrorEnvelope({
        message: 'Invalid page size',
        extensions: { code: 'INVALID_ARGUMENT' },
      });
      expect(out).toMatchObject({
        message: 'Invalid page size',
        extensions: { code: 'INVALID_ARGUMENT', category: 'VALIDATION', http_status: 200 },
      });
    });
  });

  describe("GraphQL's own request errors", () => {
    it('strips the "Did you mean" suggestion of a validation error; VALIDATION, 400', () => {
      const out = toErrorEnvelope({
        message: 'Cannot query field "spac" on type "Query". Did you mean "space"?',
        locations: [{ line: 2, column: 5 }],
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      });
      expect(out.message).toBe('Cannot query field "spac" on type "Query".');
      expect(out.message).not.toMatch(/Did you mean/);
      expect(out.message).not.toContain('"space"');
      expect(out.locations).toEqual([{ line: 2, column: 5 }]);
      expect(out.extensions).toMatchObject({
        code: 'GRAPHQL_VALIDATION_FAILED',
        category: 'VALIDATION',
        http_status: 400,
      });
      expectRecentTimestamp(out.extensions?.timestamp);
    });

    it('strips suggestions listing several names', () => {
      const out = toErrorEnvelope({
        message:
          'Unknown argument "frist" on field "Space.loyaltyPointsRanks". Did you mean "first", "after", or "cursorAfter"?',
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      });
      expect(out.message).toBe('Unknown argument "frist" on field "Space.loyaltyPointsRanks".');
    });

    it('strips an enum value suggestion from BAD_USER_INPUT', () => {
      const out = toErrorEnvelope({
        message:
          'Value "Activ" does not exist in "QuestStatus" enum. Did you mean the enum value "Active"?',
        extensions: { code: 'BAD_USER_INPUT' },
      });
      expect(out.message).toBe('Value "Activ" does not exist in "QuestStatus" enum.');
      expect(out.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        category: 'VALIDATION',
        http_status: 400,
      });
    });

    it('keeps a parse error message as it is', () => {
      const out = toErrorEnvelope({
        message: 'Syntax Error: Expected Name, found "}".',
        locations: [{ line: 1, column: 9 }],
        extensions: { code: 'GRAPHQL_PARSE_FAILED' },
      });
      expect(out.message).toBe('Syntax Error: Expected Name, found "}".');
      expect(out.extensions).toMatchObject({
        code: 'GRAPHQL_PARSE_FAILED',
        category: 'VALIDATION',
        http_status: 400,
      });
    });
  });

  describe('anything else is an internal error', () => {
    const SQL =
      'SQLITE_ERROR: no such column: "secret_hash" in SELECT * FROM access_tokens WHERE id = 1';

    it.each<[string, GraphQLFormattedError]>([
      ['an unknown code', { message: SQL, extensions: { code: 'ER_NO_SUCH_TABLE' } }],
      ['no code', { message: SQL, extensions: {} }],
      ['no extensions', { message: SQL }],
      ['a non-string code', { message: SQL, extensions: { code: 42 } }],
      ['INTERNAL_SERVER_ERROR', { message: SQL, extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
      ['a lower-case code of ours', { message: SQL, extensions: { code: 'space_not_found' } }],
      ['a prototype name as code', { message: SQL, extensions: { code: 'toString' } }],
    ])('hides the message of %s', (_label, formatted) => {
      const out = toErrorEnvelope(formatted);
      expect(out.message).toBe('Internal server error');
      expect(out.extensions).toMatchObject({
        code: 'INTERNAL_SERVER_ERROR',
        category: 'INTERNAL',
        http_status: 500,
      });
      expect(JSON.stringify(out)).not.toContain('SQLITE_ERROR');
      expect(JSON.stringify(out)).not.toContain('secret_hash');
      expectRecentTimestamp(out.extensions?.timestamp);
    });

    it('drops a stack trace and other extensions', () => {
      const out = toErrorEnvelope({
        message: 'boom',
        extensions: {
          code: 'INTERNAL_SERVER_ERROR',
          stacktrace: ['Error: boom', '    at /app/dist/x.js:1:1'],
          exception: { sql: 'SELECT 1' },
        },
      });
      expect(JSON.stringify(out)).not.toContain('/app/dist');
      expect(JSON.stringify(out)).not.toContain('SELECT 1');
      expect(Object.keys(out.extensions ?? {}).sort()).toEqual([
        'category',
        'code',
        'http_status',
        'timestamp',
      ]);
    });

    it('keeps locations and path', () => {
      const out = toErrorEnvelope({
        message: 'x',
        locations: [{ line: 3, column: 7 }],
        path: ['space', 'loyaltyPointsRanks', 0, 'address'],
        extensions: { code: 'WHATEVER' },
      });
      expect(out.locations).toEqual([{ line: 3, column: 7 }]);
      expect(out.path).toEqual(['space', 'loyaltyPointsRanks', 0, 'address']);
    });

    it('adds no locations or path when there were none', () => {
      const out = toErrorEnvelope({ message: 'x' });
      expect(out).not.toHaveProperty('locations');
      expect(out).not.toHaveProperty('path');
    });
  });
});

describe('stripSuggestions', () => {
  it('removes a trailing suggestion and the space before it', () => {
    expect(stripSuggestions('Unknown type "Spce". Did you mean "Space"?')).toBe(
      'Unknown type "Spce".',
    );
  });

  it('removes a suggestion spanning lines', () => {
    expect(stripSuggestions('Bad. Did you mean "a",\n or "b"?')).toBe('Bad.');
  });

  it('keeps a message without suggestion', () => {
    expect(stripSuggestions('Field "x" must not have a selection.')).toBe(
      'Field "x" must not have a selection.',
    );
  });
});

describe('envelopeFor', () => {
  it('uses the default message of the code and adds a request id when given', () => {
    const out = envelopeFor(ErrorCode.INVALID_CURSOR, undefined, 'req-1');
    expect(out.message).toBe('Invalid cursor');
    expect(out.extensions).toMatchObject({
      code: 'INVALID_CURSOR',
      category: 'VALIDATION',
      http_status: 200,
      request_id: 'req-1',
    });
    expectRecentTimestamp(out.extensions?.timestamp);
  });

  it('leaves request_id out when there is none', () => {
    expect(envelopeFor(ErrorCode.TOKEN_REQUIRED).extensions).not.toHaveProperty('request_id');
    expect(envelopeFor(ErrorCode.TOKEN_REQUIRED).extensions).toMatchObject({
      category: 'AUTHENTICATION',
      http_status: 401,
    });
  });
});
