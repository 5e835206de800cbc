import {
  IngestRecord,
  MAX_INT_ID,
  ParseResult,
  parseIsoTime,
  parseRecord,
  parseRecordLine,
} from './ingest-record';
import { seededRandom } from '../common/seeded-random';

function ok(result: ParseResult): IngestRecord {
  if (!result.ok)
    throw new Error(`expected the record to be accepted, was refused: ${result.reason}`);
  return result.record;
}

function refusal(result: ParseResult): string {
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result.record)}`);
  expect(typeof result.reason).toBe('string');
  expect(result.reason.length).toBeGreaterThan(0);
  return result.reason;
}

const T0 = '2026-01-01T00:00:00Z';
const T0_MS = Date.UTC(2026, 0, 1);
const T1 = '2026-01-15T12:30:00Z';
const T1_MS = Date.UTC(2026, 0, 15, 12, 30);

const POINTS = {
  type: 'points',
  key: 'evt-1',
  spaceId: 1,
  address: '0xAbC',
  points: 10,
  occurredAt: T0,
};

describe('parseIsoTime', () => {
  it.each([
    ['2026-01-01T00:00:00Z', Date.UTC(2026, 0, 1)],
    ['2026-01-31T12:00:00Z', Date.UTC(2026, 0, 31, 12)],
    ['2026-01-31T12:00Z', Date.UTC(2026, 0, 31, 12)],
    ['2026-01-31T12:00:00.5Z', Date.UTC(2026, 0, 31, 12, 0, 0, 500)],
    ['2026-01-31T12:00:00.123456789Z', Date.UTC(2026, 0, 31, 12, 0, 0, 123)],
    ['2026-01-31T12:00:00+02:00', Date.UTC(2026, 0, 31, 10)],
    ['2026-01-31T01:00:00+02:00', Date.UTC(2026, 0, 30, 23)],
    ['2026-01-31T12:00:00-05:30', Date.UTC(2026, 0, 31, 17, 30)],
    ['2026-01-31T12:00:00+00:00', Date.UTC(2026, 0, 31, 12)],
    ['2026-01-31T12:00:00-00:00', Date.UTC(2026, 0, 31, 12)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['2026-12-31T23:59:59.999Z', Date.UTC(2026, 11, 31, 23, 59, 59, 999)],
    ['1970-01-01T00:00:00Z', 0],
  ])('reads %s', (value, expected) => {
    expect(parseIsoTime(value)).toBe(expected);
  });

  it.each([
    ['no timezone', '2026-01-01T00:00:00'],
    ['a date only', '2026-01-01'],
    ['a space instead of T', '2026-01-01 00:00:00Z'],
    ['February 30', '2026-02-30T00:00:00Z'],
    ['February 29 of a common year', '2026-02-29T00:00:00Z'],
    ['April 31', '2026-04-31T00:00:00Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['month 0', '2026-00-01T00:00:00Z'],
    ['day 0', '2026-01-00T00:00:00Z'],
    ['hour 24', '2026-01-01T24:00:00Z'],
    ['minute 60', '2026-01-01T00:60:00Z'],
    ['second 60', '2026-01-01T00:00:60Z'],
    ['an offset hour of 24', '2026-01-01T00:00:00+24:00'],
    ['an offset without colon', '2026-01-01T00:00:00+0200'],
    ['an epoch number as text', '1767225600000'],
    ['a sentence', 'yesterday'],
    ['the empty string', ''],
    ['trailing text', '2026-01-01T00:00:00Zjunk'],
  ])('refuses %s', (_label, value) => {
    expect(parseIsoTime(value)).toBeNull();
  });

  it.each([
    ['1970', '2200', '1970-01-01T00:00:00Z', '2200-01-01T00:00:00Z'],
    ['0000', '9999', '0000-01-02T00:00:00Z', '9999-12-30T00:00:00Z'],
  ])(
    'agrees with Date.parse on random valid instants from %s to %s (seeded)',
    (_from, _to, first, last) => {
      const rand = seededRandom(2026);
      const pad = (n: number, w = 2) => String(n).padStart(w, '0');
      const [from, to] = [Date.parse(first), Date.parse(last)];
      for (let i = 0; i < 2000; i++) {
        const ms = from + Math.floor(rand() * (to - from));
        const offsetMinutes = (Math.floor(rand() * 27) - 13) * 60 + (rand() < 0.3 ? 30 : 0);
        const local = new Date(ms + offsetMinutes * 60_000);
        const sign = offsetMinutes < 0 ? '-' : '+';
        const abs = Math.abs(offsetMinutes);
        const text =
          `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}` +
          `T${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}` +
          `.${pad(local.getUTCMilliseconds(), 3)}${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
        expect([text, parseIsoTime(text)]).toEqual([text, ms]);
        expect(parseIsoTime(text)).toBe(Date.parse(text));
      }
    },
  );

  it('reads years before 100 as written (not as 19xx)', () => {
    expect(parseIsoTime('0050-01-01T00:00:00Z')).toBe(Date.parse('0050-01-01T00:00:00Z'));
    expect(parseIsoTime('0001-06-15T08:00:00Z')).toBe(Date.parse('0001-06-15T08:00:00Z'));
  });
});

describe('parseRecordLine / parseRecord: envelope', () => {
  it('refuses a line that is not valid JSON', () => {
    expect(refusal(parseRecordLine('{"type":"space",'))).toMatch(/JSON/);
    expect(refusal(parseRecordLine(''))).toMatch(/JSON/);
    expect(refusal(parseRecordLine("{'type':'space'}"))).toMatch(/JSON/);
  });

  it.each([
    ['an array', '[{"type":"space","id":1}]'],
    ['a number', '42'],
    ['a string', '"space"'],
    ['null', 'null'],
    ['true', 'true'],
  ])('refuses JSON that is %s, asking for an object', (_label, line) => {
    expect(refusal(parseRecordLine(line))).toMatch(/object/);
  });

  it('refuses non-object values given to parseRecord', () => {
    for (const value of [null, undefined, 0, 'x', [], [1], true]) {
      expect(refusal(parseRecord(value))).toMatch(/object/);
    }
  });

  it.each([
    ['missing', {}],
    ['unknown', { type: 'user', id: 1 }],
    ['in another case', { type: 'Space', id: 1 }],
    ['a number', { type: 1, id: 1 }],
    ['null', { type: null, id: 1 }],
    ['an Object.prototype name', { type: 'toString' }],
    ['__proto__', JSON.parse('{"type":"__proto__"}')],
  ])('refuses a type that is %s, naming type', (_label, value) => {
    expect(refusal(parseRecord(value))).toMatch(/type/);
  });

  it('refuses an unknown field, naming it', () => {
    const reason = refusal(parseRecord({ type: 'space', id: 1, colour: 'red' }));
    expect(reason).toContain('colour');
    const two = refusal(parseRecord({ ...POINTS, extra: 1, other: 2 }));
    expect(two).toContain('extra');
    expect(two).toContain('other');
  });

  it('refuses a field of another record type as unknown', () => {
    expect(refusal(parseRecord({ type: 'space', id: 1, spaceId: 2 }))).toContain('spaceId');
    expect(refusal(parseRecord({ ...POINTS, name: 'x' }))).toContain('name');
  });

  it('refuses a misspelt questType field, naming it', () => {
    expect(refusal(parseRecord({ type: 'quest', id: 'q', quest_type: 'x' }))).toContain(
      'quest_type',
    );
  });

  it('names the field at fault apart from the reason, when one field is', () => {
    const points = {
      type: 'points',
      key: 'k',
      spaceId: 1,
      address: '0xA',
      points: 1,
      occurredAt: '2026-01-01T00:00:00Z',
    };
    const fieldOf = (value: unknown) => {
      const result = parseRecord(value);
      return result.ok ? 'accepted' : result.field;
    };
    expect(fieldOf(points)).toBe('accepted');
    expect(fieldOf({ ...points, points: 1.5 })).toBe('points');
    expect(fieldOf({ ...points, occurredAt: 'yesterday' })).toBe('occurredAt');
    expect(fieldOf({ ...points, key: undefined })).toBe('key');
    expect(fieldOf({ ...points, colour: 'red' })).toBe('colour');
    expect(fieldOf({ ...points, type: 'bonus' })).toBe('type');
    expect(
      fieldOf({
        type: 'sprint',
        id: 1,
        spaceId: 1,
        name: 'S',
        startTime: '2026-01-02T00:00:00Z',
        endTime: '2026-01-01T00:00:00Z',
      }),
    ).toBe('endTime');
    expect(fieldOf([])).toBeUndefined();
  });

  it('parses a line to the same result as the decoded object', () => {
    expect(parseRecordLine(JSON.stringify(POINTS))).toEqual(parseRecord(POINTS));
  });
});

describe('space records', () => {
  it('accepts a minimal record: only the id', () => {
    const record = ok(parseRecord({ type: 'space', id: 1 }));
    expect(record).toEqual({ type: 'space', id: 1 });
    expect(record).toMatchObject({ name: undefined, description: undefined });
  });

  it('accepts a full record', () => {
    expect(
      ok(parseRecord({ type: 'space', id: 42, name: 'Galaxy', description: 'About it' })),
    ).toEqual({
      type: 'space',
      id: 42,
      name: 'Galaxy',
      description: 'About it',
    });
  });

  it('keeps an explicit null description as null (clear), absent as undefined (keep)', () => {
    const cleared = ok(parseRecord({ type: 'space', id: 1, description: null })) as {
      description?: unknown;
    };
    expect(cleared.description).toBeNull();
    const kept = ok(parseRecord({ type: 'space', id: 1 })) as { description?: unknown };
    expect(kept.description).toBeUndefined();
    expect('description' in kept ? kept.description : undefined).toBeUndefined();
  });

  it('refuses a null name, naming the field', () => {
    expect(refusal(parseRecord({ type: 'space', id: 1, name: null }))).toContain('name');
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['a number', 5],
    ['with a control character', 'a\u0000b'],
    ['too long', 'x'.repeat(256)],
  ])('refuses a name that is %s, naming the field', (_label, name) => {
    expect(refusal(parseRecord({ type: 'space', id: 1, name }))).toContain('name');
  });

  it('accepts a name of 255 characters', () => {
    expect(ok(parseRecord({ type: 'space', id: 1, name: 'x'.repeat(255) }))).toMatchObject({
      name: 'x'.repeat(255),
    });
  });

  it('refuses a missing or null id', () => {
    expect(refusal(parseRecord({ type: 'space', name: 'x' }))).toContain('id');
    expect(refusal(parseRecord({ type: 'space', id: null }))).toContain('id');
  });

  it.each(['bnbchain', 'quai', '0x-labs', 'a', 'x'.repeat(64), 'galxe-2024'])(
    'accepts the alias %p',
    (alias) => {
      expect(ok(parseRecord({ type: 'space', id: 1, alias }))).toEqual({
        type: 'space',
        id: 1,
        alias,
      });
    },
  );

  it('keeps a null alias as null (clear), absent as undefined (keep)', () => {
    expect(ok(parseRecord({ type: 'space', id: 1, alias: null }))).toMatchObject({ alias: null });
    expect(
      (ok(parseRecord({ type: 'space', id: 1 })) as { alias?: unknown }).alias,
    ).toBeUndefined();
  });

  it.each([
    ['empty', ''],
    ['in capitals', 'Quai'],
    ['with a space', 'bnb chain'],
    ['with an underscore', 'bnb_chain'],
    ['starting with a hyphen', '-quai'],
    ['too long', 'x'.repeat(65)],
    ['a number', 40],
    ['non-ASCII', 'café'],
  ])('refuses an alias that is %s, saying what an alias is', (_label, alias) => {
    const result = parseRecord({ type: 'space', id: 1, alias });
    expect(result).toEqual({
      ok: false,
      field: 'alias',
      reason:
        'alias must be 1 to 64 lower-case letters, digits and hyphens, starting with a letter or digit',
    });
  });
});

describe('integer ids', () => {
  const kinds: Array<[string, (id: unknown) => Record<string, unknown>, string]> = [
    ['space id', (id) => ({ type: 'space', id }), 'id'],
    ['sprint id', (id) => ({ type: 'sprint', id }), 'id'],
    ['sprint spaceId', (id) => ({ type: 'sprint', id: 1, spaceId: id }), 'spaceId'],
    ['quest spaceId', (id) => ({ type: 'quest', id: 'q', spaceId: id }), 'spaceId'],
    ['points spaceId', (id) => ({ ...POINTS, spaceId: id }), 'spaceId'],
  ];

  describe.each(kinds)('%s', (_label, make, field) => {
    it.each([1, 2, 1000, MAX_INT_ID])('accepts %d', (id) => {
      expect(ok(parseRecord(make(id)))).toMatchObject({ [field]: id });
    });

    it.each([
      ['0', 0],
      ['-1', -1],
      ['2147483648', MAX_INT_ID + 1],
      ['1.5', 1.5],
      ['a numeric string', '1'],
      ['NaN-like string', 'abc'],
      ['a boolean', true],
      ['an object', { id: 1 }],
    ])('refuses %s, naming the field', (_l, id) => {
      const reason = refusal(parseRecord(make(id)));
      expect(reason).toContain(field);
    });
  });

  it('uses 2147483647 as the largest id', () => {
    expect(MAX_INT_ID).toBe(2_147_483_647);
  });
});

describe('sprint records', () => {
  it('accepts a minimal record: only the id', () => {
    expect(ok(parseRecord({ type: 'sprint', id: 3 }))).toEqual({ type: 'sprint', id: 3 });
  });

  it('accepts a full record, with times in epoch milliseconds', () => {
    expect(
      ok(
        parseRecord({
          type: 'sprint',
          id: 3,
          spaceId: 1,
          name: 'Week 1',
          startTime: T0,
          endTime: T1,
        }),
      ),
    ).toEqual({
      type: 'sprint',
      id: 3,
      spaceId: 1,
      name: 'Week 1',
      startTime: T0_MS,
      endTime: T1_MS,
    });
  });

  it('refuses an endTime equal to or before the startTime', () => {
    expect(refusal(parseRecord({ type: 'sprint', id: 3, startTime: T1, endTime: T0 }))).toContain(
      'endTime',
    );
    expect(refusal(parseRecord({ type: 'sprint', id: 3, startTime: T0, endTime: T0 }))).toContain(
      'endTime',
    );
    // The same instant written with another offset is still equal.
    expect(
      refusal(
        parseRecord({ type: 'sprint', id: 3, startTime: '2026-01-01T02:00:00+02:00', endTime: T0 }),
      ),
    ).toContain('endTime');
  });

  it('accepts an endTime one millisecond after the startTime', () => {
    expect(
      ok(
        parseRecord({ type: 'sprint', id: 3, startTime: T0, endTime: '2026-01-01T00:00:00.001Z' }),
      ),
    ).toMatchObject({ startTime: T0_MS, endTime: T0_MS + 1 });
  });

  it.each(['spaceId', 'name', 'startTime', 'endTime'])('refuses a null %s, naming it', (field) => {
    expect(refusal(parseRecord({ type: 'sprint', id: 3, [field]: null }))).toContain(field);
  });

  it.each([
    ['without timezone', '2026-01-01T00:00:00'],
    ['as epoch millis', T0_MS],
    ['on February 30', '2026-02-30T00:00:00Z'],
  ])('refuses a startTime %s, naming it', (_label, startTime) => {
    expect(refusal(parseRecord({ type: 'sprint', id: 3, startTime }))).toContain('startTime');
  });
});

describe('profile records', () => {
  it('accepts a minimal record: only the address, kept as written', () => {
    expect(ok(parseRecord({ type: 'profile', address: '0xAbCdEf' }))).toEqual({
      type: 'profile',
      address: '0xAbCdEf',
    });
  });

  it('accepts a full record', () => {
    expect(
      ok(
        parseRecord({
          type: 'profile',
          address: '0xabc',
          username: 'Ünïcødé user',
          avatar: 'https://x/a.png',
        }),
      ),
    ).toEqual({
      type: 'profile',
      address: '0xabc',
      username: 'Ünïcødé user',
      avatar: 'https://x/a.png',
    });
  });

  it('keeps explicit nulls (clear) apart from absent fields (keep)', () => {
    const cleared = ok(
      parseRecord({ type: 'profile', address: 'a', username: null, avatar: null }),
    ) as unknown as Record<string, unknown>;
    expect(cleared.username).toBeNull();
    expect(cleared.avatar).toBeNull();
    const kept = ok(parseRecord({ type: 'profile', address: 'a' })) as unknown as Record<
      string,
      unknown
    >;
    expect(kept.username).toBeUndefined();
    expect(kept.avatar).toBeUndefined();
  });

  it('refuses a missing or null address', () => {
    expect(refusal(parseRecord({ type: 'profile', username: 'x' }))).toContain('address');
    expect(refusal(parseRecord({ type: 'profile', address: null }))).toContain('address');
  });
});

describe('quest records', () => {
  it('accepts a minimal record: only the id', () => {
    expect(ok(parseRecord({ type: 'quest', id: 'q-1' }))).toEqual({ type: 'quest', id: 'q-1' });
  });

  it('accepts a full record, with questType as the quest type', () => {
    expect(
      ok(
        parseRecord({
          type: 'quest',
          id: 'q-1',
          spaceId: 1,
          name: 'Join',
          status: 'Active',
          questType: 'Onboarding',
          startTime: T0,
          endTime: T1,
          cap: 100,
        }),
      ),
    ).toEqual({
      type: 'quest',
      id: 'q-1',
      spaceId: 1,
      name: 'Join',
      status: 'Active',
      questType: 'Onboarding',
      startTime: T0_MS,
      endTime: T1_MS,
      cap: 100,
    });
  });

  it.each(['Draft', 'Active', 'NotStarted', 'Expired', 'CapReached', 'Deleted'])(
    'accepts status %s',
    (status) => {
      expect(ok(parseRecord({ type: 'quest', id: 'q', status }))).toMatchObject({ status });
    },
  );

  it.each(['active', 'ACTIVE', 'Done', '', 1])('refuses status %p, naming the field', (status) => {
    expect(refusal(parseRecord({ type: 'quest', id: 'q', status }))).toContain('status');
  });

  it('refuses a null status or name, naming the field', () => {
    expect(refusal(parseRecord({ type: 'quest', id: 'q', status: null }))).toContain('status');
    expect(refusal(parseRecord({ type: 'quest', id: 'q', name: null }))).toContain('name');
  });

  it('clears questType, startTime, endTime and cap with explicit nulls', () => {
    const record = ok(
      parseRecord({
        type: 'quest',
        id: 'q',
        questType: null,
        startTime: null,
        endTime: null,
        cap: null,
      }),
    ) as unknown as Record<string, unknown>;
    expect(record.questType).toBeNull();
    expect(record.startTime).toBeNull();
    expect(record.endTime).toBeNull();
    expect(record.cap).toBeNull();
  });

  it('accepts cap 0, refuses a negative or fractional cap', () => {
    expect(ok(parseRecord({ type: 'quest', id: 'q', cap: 0 }))).toMatchObject({ cap: 0 });
    expect(refusal(parseRecord({ type: 'quest', id: 'q', cap: -1 }))).toContain('cap');
    expect(refusal(parseRecord({ type: 'quest', id: 'q', cap: 1.5 }))).toContain('cap');
  });

  it('takes the quest id as a string and refuses a numeric one', () => {
    expect(refusal(parseRecord({ type: 'quest', id: 5 }))).toContain('id');
    expect(refusal(parseRecord({ type: 'quest', id: '' }))).toContain('id');
  });
});

describe('participation records', () => {
  it('accepts a valid record', () => {
    expect(ok(parseRecord({ type: 'participation', questId: 'q-1', address: '0xabc' }))).toEqual({
      type: 'participation',
      questId: 'q-1',
      address: '0xabc',
    });
  });

  it('requires questId and address, naming the missing one', () => {
    expect(refusal(parseRecord({ type: 'participation', address: '0xabc' }))).toContain('questId');
    expect(refusal(parseRecord({ type: 'participation', questId: 'q-1' }))).toContain('address');
    expect(
      refusal(parseRecord({ type: 'participation', questId: 'q-1', address: null })),
    ).toContain('address');
  });
});

describe('points records', () => {
  it('accepts a valid record, converting occurredAt to epoch milliseconds', () => {
    expect(ok(parseRecord(POINTS))).toEqual({
      type: 'points',
      key: 'evt-1',
      spaceId: 1,
      address: '0xAbC',
      points: 10,
      occurredAt: T0_MS,
    });
  });

  it('converts an occurredAt with an offset to UTC', () => {
    const record = ok(parseRecord({ ...POINTS, occurredAt: '2026-03-10T14:15:16.250+02:00' }));
    expect(record).toMatchObject({ occurredAt: Date.UTC(2026, 2, 10, 12, 15, 16, 250) });
    const west = ok(parseRecord({ ...POINTS, occurredAt: '2026-03-10T22:00:00-03:00' }));
    expect(west).toMatchObject({ occurredAt: Date.UTC(2026, 2, 11, 1) });
  });

  it.each([0, -1, 1, -1_000_000_000, 1_000_000_000])('accepts %d points', (points) => {
    expect(ok(parseRecord({ ...POINTS, points }))).toMatchObject({ points });
  });

  it.each([
    ['fractional', 1.5],
    ['above 1e9', 1_000_000_001],
    ['below -1e9', -1_000_000_001],
    ['a string', '10'],
    ['NaN-like', 'NaN'],
    ['null', null],
  ])('refuses %s points, naming the field', (_label, points) => {
    expect(refusal(parseRecord({ ...POINTS, points }))).toContain('points');
  });

  it.each(['key', 'spaceId', 'address', 'points', 'occurredAt'])(
    'refuses a missing %s, naming it',
    (field) => {
      const value: Record<string, unknown> = { ...POINTS };
      delete value[field];
      expect(refusal(parseRecord(value))).toContain(field);
    },
  );

  it.each(['key', 'spaceId', 'address', 'points', 'occurredAt'])(
    'refuses a null %s, naming it',
    (field) => {
      expect(refusal(parseRecord({ ...POINTS, [field]: null }))).toContain(field);
    },
  );

  it.each([
    ['empty', ''],
    ['blank', '  '],
    ['too long', 'k'.repeat(192)],
    ['a number', 7],
  ])('refuses a key that is %s', (_label, key) => {
    expect(refusal(parseRecord({ ...POINTS, key }))).toContain('key');
  });

  it.each([
    ['a space inside', '0x ab'],
    ['a leading space', ' 0xab'],
    ['a tab', '0x\tab'],
    ['non-ASCII letters', '0xäb'],
    ['an emoji', '0x😀'],
    ['empty', ''],
    ['too long', 'a'.repeat(129)],
  ])('refuses an address with %s, naming the field', (_label, address) => {
    expect(refusal(parseRecord({ ...POINTS, address }))).toContain('address');
  });

  it('accepts printable ASCII addresses up to 128 characters', () => {
    expect(ok(parseRecord({ ...POINTS, address: 'a'.repeat(128) }))).toMatchObject({
      address: 'a'.repeat(128),
    });
    expect(ok(parseRecord({ ...POINTS, address: '!~user@example.com' }))).toMatchObject({
      address: '!~user@example.com',
    });
  });

  it.each([
    ['without a timezone', '2026-01-01T00:00:00'],
    ['on February 30', '2026-02-30T00:00:00Z'],
    ['as a date only', '2026-01-01'],
    ['as epoch millis', T0_MS],
  ])('refuses an occurredAt %s, naming the field', (_label, occurredAt) => {
    expect(refusal(parseRecord({ ...POINTS, occurredAt }))).toContain('occurredAt');
  });

  it('parses an NDJSON line', () => {
    expect(
      ok(
        parseRecordLine(
          '{"type":"points","key":"k","spaceId":2,"address":"a","points":-3,"occurredAt":"2026-01-01T00:00:00Z"}',
        ),
      ),
    ).toEqual({
      type: 'points',
      key: 'k',
      spaceId: 2,
      address: 'a',
      points: -3,
      occurredAt: T0_MS,
    });
  });
});
