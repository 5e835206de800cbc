import fc from 'fast-check';
import type { RankedEntry } from '../read/board-reader';
import { seededRandom } from '../../common/seeded-random';
import { compareRankKeys, RankKey } from '../ranking/ranking';
import { BoardIndex } from './board-index';

/**
 * BoardIndex against a brute-force model: a Map address -> values, sorted with compareRankKeys
 * whenever it is asked anything. Every answer of the index must equal the model's.
 */

interface Values {
  points: number;
  reachedAt: number;
}

class Model {
  readonly entries = new Map<string, Values>();

  /** The documented semantics of BoardIndex.set(). */
  set(addressKey: string, points: number, reachedAt: number): boolean {
    const current = this.entries.get(addressKey);
    if (current) {
      if (current.points === points && current.reachedAt === reachedAt) return false;
      if (points <= 0) this.entries.delete(addressKey);
      else this.entries.set(addressKey, { points, reachedAt });
      return true;
    }
    if (points <= 0) return false;
    this.entries.set(addressKey, { points, reachedAt });
    return true;
  }

  /** fromEntries(): the last row of an address wins, rows at 0 points or below are left out. */
  static fromRows(rows: Iterable<RankKey>): Model {
    const model = new Model();
    const last = new Map<string, Values>();
    for (const row of rows)
      last.set(row.addressKey, { points: row.points, reachedAt: row.reachedAt });
    for (const [addressKey, values] of last) {
      if (values.points > 0) model.entries.set(addressKey, values);
    }
    return model;
  }

  ranked(): RankedEntry[] {
    return [...this.entries]
      .map(([addressKey, { points, reachedAt }]) => ({ points, reachedAt, addressKey }))
      .sort(compareRankKeys)
      .map((key, i) => ({ ...key, rank: i + 1 }));
  }

  addresses(): string[] {
    return [...this.entries.keys()];
  }
}

// --- addresses ---

const PACKED_POOL = [
  '0x' + '0'.repeat(40),
  '0x' + '0'.repeat(39) + '1',
  '0x' + '0'.repeat(20) + 'f'.repeat(20),
  '0x' + '9'.repeat(40),
  '0x' + 'a'.repeat(40),
  '0x' + 'ab'.repeat(20),
  '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed',
  '0x' + 'f'.repeat(40),
];

/** Kept as strings by the index; several sort between (or right next to) packed ones. */
const OTHER_POOL = [
  '0x' + 'A'.repeat(40), // upper-case hex: between '0x999…' and '0xaaa…'
  '0x5AAEB6053F3E94C9B9A09F33669435E7EF1BEAED',
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', // mixed case (EIP-55)
  '0x' + '0'.repeat(39) + 'g', // 42 chars, last one not hex
  '0x' + 'g' + '0'.repeat(39), // 42 chars, first digit not hex
  '0X' + '0'.repeat(40),
  '0x' + '0'.repeat(41), // 43 chars: the all-zero packed address plus one
  '0x' + '0'.repeat(39), // 41 chars: a prefix of it
  '0x',
  '',
  ' ',
  'alice',
  'Bob',
  'zoë',
  'Ω',
  '\ufb00',
  '😀', // a surrogate pair: before '\uffff' by code unit, after it by code point
  '\uffff',
];

const POOL = [...PACKED_POOL, ...OTHER_POOL];

/** Distinct addresses for big boards: mostly packed (in no particular order), some not. */
function addressFor(i: number): string {
  if (i % 7 === 3) return `user-${i}`;
  if (i % 11 === 5) return '0x' + hexOf(i).toUpperCase().repeat(5);
  return '0x' + hexOf(i).repeat(5);
}

function hexOf(i: number): string {
  return (Math.imul(i, 0x9e3779b1) >>> 0).toString(16).padStart(8, '0');
}

// --- arbitraries ---

/** Small ranges, so that ties on points and on reachedAt are common; a few odd values too. */
const pointsArb = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: -1, max: 4 }) },
  { weight: 1, arbitrary: fc.constantFrom(-0, 0.5, 2.5, 1e15, Number.MAX_SAFE_INTEGER) },
);
const reachedAtArb = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 0, max: 2 }) },
  { weight: 1, arbitrary: fc.constantFrom(-0, -5, 1.5, 1_700_000_000_000) },
);
const poolIndexArb = fc.nat({ max: POOL.length - 1 });

type Op =
  /** set() of a pool address with any values. */
  | { kind: 'set'; address: number; points: number; reachedAt: number }
  /** set() of an entry on the board, its values moved by a little (possibly to 0 points). */
  | { kind: 'move'; pick: number; points: number; reachedAt: number }
  /** set() of an entry on the board with exactly its values (answers false). */
  | { kind: 'repeat'; pick: number }
  /** set() of an entry on the board at 0 points or below (removes it). */
  | { kind: 'remove'; pick: number; points: number }
  /** Compare the whole index with the model now. */
  | { kind: 'check' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      kind: fc.constant('set' as const),
      address: poolIndexArb,
      points: pointsArb,
      reachedAt: reachedAtArb,
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('move' as const),
      pick: fc.nat(),
      points: fc.integer({ min: -2, max: 2 }),
      reachedAt: fc.integer({ min: -1, max: 1 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('repeat' as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('remove' as const),
      pick: fc.nat(),
      points: fc.constantFrom(0, -0, -1, -1e9),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'check' as const }) },
);

/** A key for countAhead/countThrough: anywhere, or an entry on the board as is or nudged. */
type KeySpec =
  | { kind: 'free'; points: number; reachedAt: number; address: string }
  | { kind: 'entry'; pick: number; nudge: Nudge };

type Nudge =
  'none' | 'pointsUp' | 'pointsDown' | 'earlier' | 'later' | 'addressAfter' | 'addressBefore';

const keyArb: fc.Arbitrary<KeySpec> = fc.oneof(
  fc.record({
    kind: fc.constant('free' as const),
    points: fc.oneof(pointsArb, fc.constantFrom(3.5, 5, 1e300)),
    reachedAt: fc.oneof(reachedAtArb, fc.constant(0.5)),
    address: fc.oneof(
      { weight: 4, arbitrary: poolIndexArb.map((i) => POOL[i]) },
      { weight: 1, arbitrary: fc.string({ maxLength: 44, size: 'max' }) },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
      { weight: 1, arbitrary: fc.stringMatching(/^0x[0-9a-f]{40}$/) },
    ),
  }),
  fc.record({
    kind: fc.constant('entry' as const),
    pick: fc.nat(),
    nudge: fc.constantFrom<Nudge>(
      'none',
      'none',
      'pointsUp',
      'pointsDown',
      'earlier',
      'later',
      'addressAfter',
      'addressBefore',
    ),
  }),
);

/** slice(start, limit): starts before 0, at 0, inside and past the end; limits 0 to unbounded. */
const sliceArb = fc.tuple(
  fc.oneof(
    fc.integer({ min: -3, max: POOL.length + 3 }),
    fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER),
  ),
  fc.oneof(
    fc.integer({ min: -1, max: POOL.length + 3 }),
    fc.constantFrom(0, 1, Number.MAX_SAFE_INTEGER, Infinity),
  ),
);

interface Queries {
  keys: KeySpec[];
  slices: [number, number][];
}

const queriesArb: fc.Arbitrary<Queries> = fc.record({
  keys: fc.array(keyArb, { minLength: 1, maxLength: 12, size: 'max' }),
  slices: fc.array(sliceArb, { minLength: 1, maxLength: 8, size: 'max' }),
});

// --- running and checking ---

function present(model: Model, pick: number): string | undefined {
  const addresses = model.addresses();
  return addresses.length === 0 ? undefined : addresses[pick % addresses.length];
}

/** Applies one op to both; answers whether it was a check point. */
function apply(index: BoardIndex, model: Model, op: Op): boolean {
  let address: string | undefined;
  let points: number;
  let reachedAt: number;
  switch (op.kind) {
    case 'check':
      return true;
    case 'set':
      address = POOL[op.address];
      points = op.points;
      reachedAt = op.reachedAt;
      break;
    case 'move':
    case 'repeat':
    case 'remove': {
      address = present(model, op.pick);
      if (address === undefined) return false;
      const current = model.entries.get(address)!;
      points =
        op.kind === 'move'
          ? current.points + op.points
          : op.kind === 'remove'
            ? op.points
            : current.points;
      reachedAt = op.kind === 'move' ? current.reachedAt + op.reachedAt : current.reachedAt;
      break;
    }
  }
  setBoth(index, model, address, points, reachedAt);
  return false;
}

/** set() on both; the index must answer as the model does. */
function setBoth(
  index: BoardIndex,
  model: Model,
  address: string,
  points: number,
  reachedAt: number,
): void {
  const expected = model.set(address, points, reachedAt);
  if (index.set(address, points, reachedAt) !== expected) {
    throw new Error(
      `set(${JSON.stringify(address)}, ${points}, ${reachedAt}) answered ${!expected}, expected ${expected}`,
    );
  }
}

function resolveKey(spec: KeySpec, ranked: RankedEntry[]): RankKey {
  if (spec.kind === 'free' || ranked.length === 0) {
    return spec.kind === 'free'
      ? { points: spec.points, reachedAt: spec.reachedAt, addressKey: spec.address }
      : { points: 1, reachedAt: 0, addressKey: 'alice' };
  }
  const { points, reachedAt, addressKey } = ranked[spec.pick % ranked.length];
  switch (spec.nudge) {
    case 'none':
      return { points, reachedAt, addressKey };
    case 'pointsUp':
      return { points: points + 1, reachedAt, addressKey };
    case 'pointsDown':
      return { points: points - 1, reachedAt, addressKey };
    case 'earlier':
      return { points, reachedAt: reachedAt - 1, addressKey };
    case 'later':
      return { points, reachedAt: reachedAt + 1, addressKey };
    case 'addressAfter':
      return { points, reachedAt, addressKey: addressKey + '\0' };
    case 'addressBefore':
      return { points, reachedAt, addressKey: addressKey.slice(0, -1) };
  }
}

function expectedSlice(ranked: RankedEntry[], start: number, limit: number): RankedEntry[] {
  if (start < 0 || limit <= 0) return [];
  return ranked.slice(start, start + limit);
}

function sameEntry(a: RankedEntry | null | undefined, b: RankedEntry | null | undefined): boolean {
  if (!a || !b) return a === b;
  return (
    Object.keys(a).length === 4 &&
    Object.is(a.points, b.points) &&
    Object.is(a.reachedAt, b.reachedAt) &&
    a.addressKey === b.addressKey &&
    a.rank === b.rank
  );
}

/**
 * Compares two lists of entries cheaply and, on a mismatch, fails with the first differing
 * position only (a readable message even for thousands of entries).
 */
function expectEntries(
  what: string | ((at: number) => string),
  actual: (RankedEntry | null)[],
  expected: (RankedEntry | null)[],
): void {
  if (actual.length === expected.length && actual.every((a, i) => sameEntry(a, expected[i]))) {
    return;
  }
  let at = 0;
  while (at < Math.min(actual.length, expected.length) && sameEntry(actual[at], expected[at])) at++;
  const call = typeof what === 'string' ? what : what(at);
  expect({ call, at, length: actual.length, entry: actual[at] }).toEqual({
    call,
    at,
    length: expected.length,
    entry: expected[at],
  });
}

/** Everything the index answers, against the model. */
function expectSameBoard(
  index: BoardIndex,
  model: Model,
  addresses: Iterable<string>,
  queries: Queries,
): void {
  const ranked = model.ranked();
  expect(index.size).toBe(ranked.length);
  expectEntries('slice(0, size)', index.slice(0, ranked.length), ranked);
  expectEntries('slice(0, size + 1)', index.slice(0, ranked.length + 1), ranked);

  const byAddress = new Map(ranked.map((entry) => [entry.addressKey, entry]));
  const asked = [...addresses];
  expectEntries(
    (at) => `get(${JSON.stringify(asked[at])})`,
    asked.map((address) => index.get(address)),
    asked.map((address) => byAddress.get(address) ?? null),
  );

  // Every position (so every chunk boundary): select one by position, and count up to each entry.
  expectEntries(
    (at) => `slice(${at}, 1)`,
    ranked.map((_, at) => index.slice(at, 1)[0] ?? null),
    ranked,
  );
  const badCount = ranked.find(
    (entry) =>
      index.countAhead(entry) !== entry.rank - 1 || index.countThrough(entry) !== entry.rank,
  );
  if (badCount) {
    expect({
      key: badCount,
      countAhead: index.countAhead(badCount),
      countThrough: index.countThrough(badCount),
    }).toEqual({ key: badCount, countAhead: badCount.rank - 1, countThrough: badCount.rank });
  }

  for (const spec of queries.keys) {
    const key = resolveKey(spec, ranked);
    const ahead = ranked.filter((entry) => compareRankKeys(entry, key) < 0).length;
    const through = ranked.filter((entry) => compareRankKeys(entry, key) <= 0).length;
    const answers = [index.countAhead(key), index.countThrough(key)];
    if (answers[0] !== ahead || answers[1] !== through) {
      expect({ key, countAhead: answers[0], countThrough: answers[1] }).toEqual({
        key,
        countAhead: ahead,
        countThrough: through,
      });
    }
  }

  for (const [start, limit] of queries.slices) {
    expectEntries(
      `slice(${start}, ${limit})`,
      index.slice(start, limit),
      expectedSlice(ranked, start, limit),
    );
  }
}

function run(index: BoardIndex, model: Model, ops: Op[], addresses: string[], queries: Queries) {
  for (const op of ops) {
    if (apply(index, model, op)) expectSameBoard(index, model, addresses, queries);
  }
  expectSameBoard(index, model, addresses, queries);
}

/** Queries without randomness, for the big boards: ends, middle, past the end. */
function fixedQueries(size: number): Queries {
  const slices: [number, number][] = [
    [0, 10],
    [Math.floor(size / 2), 1500],
    [Math.max(0, size - 3), 10],
    [size, 5],
    [1023, 3],
    [767, 3],
    [-1, 5],
  ];
  const keys: KeySpec[] = [0, 1, 767, 768, 1023, 1024, size >> 1, size - 1].flatMap((pick) => [
    { kind: 'entry' as const, pick, nudge: 'none' as const },
    { kind: 'entry' as const, pick, nudge: 'addressAfter' as const },
    { kind: 'entry' as const, pick, nudge: 'later' as const },
  ]);
  return { keys, slices };
}

function shuffle<T>(items: T[], seed: number): T[] {
  const random = seededRandom(seed);
  const shuffled = [...items];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
  }
  return shuffled;
}

// --- rows for fromEntries ---

const rowArb: fc.Arbitrary<RankKey> = fc.record({
  addressKey: poolIndexArb.map((i) => POOL[i]),
  points: pointsArb,
  reachedAt: reachedAtArb,
});

type RowOrder = 'rank order' | 'as generated' | 'rank order with duplicates' | 'reverse rank order';

/** Rows as fromEntries might be given them. */
function arrangeRows(rows: RankKey[], order: RowOrder): RankKey[] {
  switch (order) {
    case 'as generated':
      return rows;
    case 'rank order':
      // What the database gives: one row per address, on the board, sorted.
      return Model.fromRows(rows)
        .ranked()
        .map(({ points, reachedAt, addressKey }) => ({ points, reachedAt, addressKey }));
    case 'rank order with duplicates':
      return [...rows].sort(compareRankKeys);
    case 'reverse rank order':
      return [...rows].sort(compareRankKeys).reverse();
  }
}

const rowOrderArb = fc.constantFrom<RowOrder>(
  'rank order',
  'as generated',
  'rank order with duplicates',
  'reverse rank order',
);

/**
 * fc.assert options: modest runs, and a time limit so that shrinking a failure on a big board ends
 * (with the smallest counterexample found so far) before jest's timeout.
 */
function runs(numRuns: number): fc.Parameters<unknown> {
  return { numRuns, plugins: [fc.interruptAfterTimeLimit(30_000, { failOnInterrupt: true })] };
}

describe('BoardIndex', () => {
  it('answers like a sorted map under any sequence of set() calls on a small, tie-heavy pool', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 100, size: 'max' }), queriesArb, (ops, queries) => {
        run(new BoardIndex(), new Model(), ops, POOL, queries);
      }),
      runs(500),
    );
  });

  it('fromEntries keeps the last row of each address above 0 points, in any row order, and set() works after it', () => {
    fc.assert(
      fc.property(
        fc.array(rowArb, { maxLength: 40, size: 'max' }),
        rowOrderArb,
        fc.constantFrom<'none' | 'row count' | 'zero' | 'one'>('none', 'row count', 'zero', 'one'),
        fc.array(opArb, { maxLength: 40, size: 'max' }),
        queriesArb,
        (generated, order, expected, ops, queries) => {
          const rows = arrangeRows(generated, order);
          const model = Model.fromRows(rows);
          const index =
            expected === 'none'
              ? BoardIndex.fromEntries(rows)
              : BoardIndex.fromEntries(
                  rows,
                  expected === 'row count' ? rows.length : expected === 'zero' ? 0 : 1,
                );
          expectSameBoard(index, model, POOL, queries);
          run(index, model, ops, POOL, queries);
        },
      ),
      runs(300),
    );
  });

  it('thousands of inserts split chunks, and deleting most entries shrinks them again, with every answer exact throughout', () => {
    const entryArb = fc.record({
      points: fc.integer({ min: 1, max: 40 }),
      reachedAt: fc.integer({ min: 0, max: 20 }),
      deleteOrder: fc.nat(),
      keep: fc.nat({ max: 19 }).map((n) => n === 0),
    });
    fc.assert(
      fc.property(
        fc.array(entryArb, { minLength: 1100, maxLength: 3500, size: 'max' }),
        fc.constantFrom('as generated', 'best first', 'worst first'),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: -15, max: 15 })), {
          maxLength: 300,
          size: 'max',
        }),
        // Which entries survive: a random 5%, or a block of 5% of the ranks starting at 10% to
        // 80% (so that whole chunks before and after it empty out); and the order the others are
        // deleted in.
        fc.oneof(fc.constant('scattered' as const), fc.noBias(fc.integer({ min: 10, max: 80 }))),
        fc.constantFrom('random', 'from the top', 'from the bottom'),
        (entries, insertOrder, moves, survivors, deleteOrder) => {
          const index = new BoardIndex();
          const model = new Model();
          const rows = entries.map((entry, i) => ({ ...entry, addressKey: addressFor(i) }));
          const addresses = rows.map((row) => row.addressKey);
          const check = () => expectSameBoard(index, model, addresses, fixedQueries(index.size));

          const inserts =
            insertOrder === 'as generated'
              ? rows
              : [...rows].sort(
                  (a, b) => compareRankKeys(a, b) * (insertOrder === 'best first' ? 1 : -1),
                );
          for (const row of inserts)
            setBoth(index, model, row.addressKey, row.points, row.reachedAt);
          check();

          // Moves across the whole board (and so across chunks).
          for (const [pick, delta] of moves) {
            const row = rows[pick % rows.length];
            const current = model.entries.get(row.addressKey)!;
            setBoth(
              index,
              model,
              row.addressKey,
              Math.max(1, current.points + delta),
              current.reachedAt + 1,
            );
          }
          check();

          const rank = new Map(model.ranked().map((entry) => [entry.addressKey, entry.rank]));
          const rankOf = (row: { addressKey: string }) => rank.get(row.addressKey)!;
          const blockFrom =
            survivors === 'scattered' ? 0 : Math.floor((rows.length * survivors) / 100);
          const blockTo = blockFrom + Math.ceil(rows.length / 20);
          const doomed = rows.filter((row) =>
            survivors === 'scattered'
              ? !row.keep
              : rankOf(row) <= blockFrom || rankOf(row) > blockTo,
          );
          if (deleteOrder === 'random') doomed.sort((a, b) => a.deleteOrder - b.deleteOrder);
          else
            doomed.sort(
              (a, b) => (rankOf(a) - rankOf(b)) * (deleteOrder === 'from the top' ? 1 : -1),
            );
          const checkpoints = new Set([1, 2, 3].map((q) => (doomed.length * q) >> 2));
          doomed.forEach((row, i) => {
            setBoth(index, model, row.addressKey, 0, 0);
            if (checkpoints.has(i)) check();
          });
          check();

          // And grow again over the shrunk chunks.
          for (const row of doomed.slice(0, 1200)) {
            setBoth(index, model, row.addressKey, row.points, row.reachedAt);
          }
          check();
        },
      ),
      runs(12),
    );
  });

  it('an index loaded with thousands of rows stays exact while set() moves entries, overfills one chunk and empties others', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            points: fc.integer({ min: -1, max: 30 }),
            reachedAt: fc.integer({ min: 0, max: 10 }),
          }),
          { minLength: 800, maxLength: 3000, size: 'max' },
        ),
        fc.boolean(),
        fc.array(
          fc.record({
            pick: fc.nat(),
            points: fc.integer({ min: -2, max: 31 }),
            reachedAt: fc.integer({ min: 0, max: 10 }),
          }),
          { minLength: 1, maxLength: 1500, size: 'max' },
        ),
        // New addresses all at the same points (so into one chunk), enough to split it.
        fc.record({
          count: fc.integer({ min: 0, max: 800 }),
          points: fc.integer({ min: 1, max: 30 }),
        }),
        // A band of ranks (in percent) deleted afterwards, emptying the chunks inside it.
        fc.record({ from: fc.nat({ max: 100 }), width: fc.integer({ min: 20, max: 100 }) }),
        (generated, inRankOrder, updates, burst, band) => {
          // A few addresses appear twice (i % 97 maps onto earlier ones): the later row wins.
          const rows = generated.map((row, i) => ({
            ...row,
            addressKey: addressFor(i % 97 === 96 ? i >> 1 : i),
          }));
          const arranged = inRankOrder ? arrangeRows(rows, 'rank order') : rows;
          const model = Model.fromRows(arranged);
          const index = BoardIndex.fromEntries(arranged, arranged.length);
          const loaded = [...new Set(rows.map((row) => row.addressKey))];
          const newcomers = Array.from({ length: burst.count }, (_, i) => addressFor(100_000 + i));
          const addresses = [...loaded, ...newcomers];
          const check = () => expectSameBoard(index, model, addresses, fixedQueries(index.size));
          check();

          updates.forEach(({ pick, points, reachedAt }, i) => {
            setBoth(index, model, loaded[pick % loaded.length], points, reachedAt);
            if (i === updates.length >> 1) check();
          });
          check();

          newcomers.forEach((address, i) => setBoth(index, model, address, burst.points, i % 11));
          check();

          const ranked = model.ranked();
          const gone = ranked.slice(
            Math.floor((ranked.length * band.from) / 100),
            Math.ceil((ranked.length * Math.min(100, band.from + band.width)) / 100),
          );
          gone.forEach((entry, i) => {
            setBoth(index, model, entry.addressKey, 0, 0);
            if (i === gone.length >> 1) check();
          });
          check();
        },
      ),
      runs(10),
    );
  });

  it('a chunk shrinking to nothing next to a neighbour of any fill, while entries keep arriving, is merged or dropped without losing or misplacing an entry', () => {
    // fromEntries fills chunks with 768 entries; a chunk holds up to 1024 and under 128 entries it
    // is merged into its next neighbour when both fit in 512, or dropped once empty.
    const LOADED = 768;
    const rows = Array.from({ length: 2 * LOADED }, (_, i) => ({
      addressKey: addressFor(i),
      points: 2 * LOADED - i,
      reachedAt: 0,
    }));
    fc.assert(
      fc.property(
        fc.constantFrom('first', 'second'),
        fc.record({
          added: fc.noBias(fc.integer({ min: 0, max: 255 })),
          removed: fc.oneof(fc.constant(0), fc.noBias(fc.integer({ min: 1, max: 700 }))),
        }),
        // Entries left in the shrinking chunk: none, or fewer than 128.
        fc.oneof(fc.constant(0), fc.noBias(fc.integer({ min: 1, max: 127 }))),
        fc.constantFrom('from its top', 'from its bottom', 'at random'),
        // While it shrinks: nothing else; or after each deletion an entry arrives anywhere and
        // leaves again (so every intermediate state takes an insert); or after every second
        // deletion an entry arrives to stay.
        fc.constantFrom('none', 'visitors', 'newcomers'),
        fc.integer(),
        fc.array(
          fc.record({
            points: fc.integer({ min: 1, max: 2 * LOADED }),
            reachedAt: fc.integer({ min: 0, max: 3 }),
          }),
          { maxLength: 400, size: 'max' },
        ),
        (emptied, neighbour, left, order, arrivals, seed, later) => {
          const index = BoardIndex.fromEntries(rows, rows.length);
          const model = Model.fromRows(rows);
          const first = rows.slice(0, LOADED);
          const second = rows.slice(LOADED);
          const [shrinking, other] = emptied === 'first' ? [first, second] : [second, first];
          // Refill the neighbour (ties on points, later reachedAt: inside that chunk) and thin it.
          const added = Array.from({ length: neighbour.added }, (_, j) => ({
            addressKey: addressFor(10_000 + j),
            points: other[1 + (j % (LOADED - 2))].points,
            reachedAt: 1,
          }));
          const addresses = [...rows, ...added].map((row) => row.addressKey);
          for (const row of added) setBoth(index, model, row.addressKey, row.points, row.reachedAt);
          for (const row of other.slice(0, neighbour.removed)) {
            setBoth(index, model, row.addressKey, 0, 0);
          }

          const doomed =
            order === 'from its top'
              ? shrinking
              : order === 'from its bottom'
                ? [...shrinking].reverse()
                : shuffle(shrinking, seed);
          const random = seededRandom(seed);
          doomed.slice(0, LOADED - left).forEach((row, i) => {
            setBoth(index, model, row.addressKey, 0, 0);
            if (arrivals === 'none' || (arrivals === 'newcomers' && i % 2 === 1)) return;
            const address = addressFor(30_000 + i);
            addresses.push(address);
            setBoth(index, model, address, 1 + Math.floor(random() * 2 * LOADED), 2);
            if (arrivals === 'visitors') setBoth(index, model, address, 0, 0);
          });
          expectSameBoard(index, model, addresses, fixedQueries(index.size));

          later.forEach(({ points, reachedAt }, j) => {
            const address = addressFor(20_000 + j);
            addresses.push(address);
            setBoth(index, model, address, points, reachedAt);
          });
          expectSameBoard(index, model, addresses, fixedQueries(index.size));
        },
      ),
      runs(60),
    );
  });

  it('grows past its initial capacity one set() at a time', () => {
    const index = new BoardIndex();
    const model = new Model();
    const addresses: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const address = addressFor(i);
      addresses.push(address);
      const points = 1 + ((i * 7919) % 50);
      const reachedAt = i % 13;
      expect(index.set(address, points, reachedAt)).toBe(model.set(address, points, reachedAt));
      if (i === 15 || i === 16 || i === 1023 || i === 1024) {
        expectSameBoard(index, model, addresses, fixedQueries(index.size));
      }
    }
    expectSameBoard(index, model, addresses, fixedQueries(index.size));
    expect(index.size).toBe(5000);
  });

  it('finds every address while its hash table grows, fills with deletions and takes back re-inserted addresses', () => {
    const index = new BoardIndex();
    const model = new Model();
    const addresses = Array.from({ length: 3000 }, (_, i) => addressFor(i));
    const set = (address: string, points: number, reachedAt: number) =>
      setBoth(index, model, address, points, reachedAt);

    // Grow the table, delete most entries (tombstones), re-insert some of them and some new ones.
    addresses.slice(0, 2000).forEach((address, i) => set(address, 1 + (i % 9), i % 4));
    addresses.slice(0, 2000).forEach((address, i) => i % 10 !== 0 && set(address, 0, 0));
    expectSameBoard(index, model, addresses, fixedQueries(index.size));
    addresses.slice(0, 2000).forEach((address, i) => i % 3 === 0 && set(address, 2 + (i % 5), 7));
    addresses.slice(2000).forEach((address, i) => set(address, 1 + (i % 6), i % 3));
    expectSameBoard(index, model, addresses, fixedQueries(index.size));

    // Churn: every round adds ten addresses never seen before (at the top of the board) and
    // deletes them again, and deletes and re-inserts one old entry with its values, so tombstones
    // pile up in the table while the board keeps the same entries.
    const survivors = model.addresses();
    const churned: string[] = [];
    const churn = (rounds: number) => {
      for (let round = 0; round < rounds; round++) {
        const batch = Array.from({ length: 10 }, () => addressFor(10_000 + churned.length));
        churned.push(...batch);
        batch.forEach((address, i) => set(address, 1e6 + (i % 4), round));
        batch.forEach((address) => set(address, 0, 0));
        const again = survivors[round % survivors.length];
        const { points, reachedAt } = model.entries.get(again)!;
        set(again, 0, 0);
        expect(index.get(again)).toBeNull();
        set(again, points, reachedAt);
      }
      // A packed probe, so the probe slot holds no string when bytes are measured.
      index.countAhead({ points: 1, reachedAt: 0, addressKey: PACKED_POOL[0] });
    };
    churn(100);
    const bytesAfterSomeChurn = index.bytes;
    expectSameBoard(index, model, [...addresses, ...churned], fixedQueries(index.size));
    churn(1000);
    // Tombstones are cleared on rehash and slots are reused: churn alone does not grow the index.
    expect(index.bytes).toBeLessThanOrEqual(bytesAfterSomeChurn);
    expectSameBoard(index, model, [...addresses, ...churned], fixedQueries(index.size));
  });

  it('holds a 100,000-entry board of packed addresses in under 64 bytes per entry', () => {
    const rows: RankKey[] = Array.from({ length: 100_000 }, (_, i) => ({
      addressKey: '0x' + hexOf(i).repeat(5),
      points: 1 + (i % 5000),
      reachedAt: 1_700_000_000_000 + i,
    })).sort(compareRankKeys);
    const index = BoardIndex.fromEntries(rows, rows.length);
    expect(index.size).toBe(100_000);
    expect(index.bytes).toBeLessThan(64 * index.size);
    expect(index.slice(0, 1)).toEqual([{ ...rows[0], rank: 1 }]);
    expect(index.get(rows[54_321].addressKey)).toEqual({ ...rows[54_321], rank: 54_322 });
    expect(index.slice(99_999, 5)).toEqual([{ ...rows[99_999], rank: 100_000 }]);
  });
});
