#!/usr/bin/env node
// Writes an NDJSON file of N points records over A addresses (one space, two sprints of two weeks;
// events spread over four weeks, so each lands on the all-time board and on one sprint).
//   node bench/ingest-file.js OUT [--records 1000000] [--addresses 100000]
//                                 [--distribution uniform|zipf|cycle] [--seed 1] [--key-prefix b]
// uniform: each record's address drawn uniformly at random (seeded); zipf: a few addresses get
// most records (s = 1); cycle: address i*7919 mod A, so every run of A consecutive records hits
// each address once and each address always gets the same points (a flattering case: the order of
// the board never changes). Points are 1..100, one record in 50 is a deduction of 1..20.
/* eslint-disable */
const { createWriteStream } = require('node:fs');

function options(argv) {
  const arg = (name, fallback) => {
    const i = argv.indexOf(`--${name}`);
    return i === -1 ? fallback : argv[i + 1];
  };
  return {
    out: argv[2],
    records: Number(arg('records', 1_000_000)),
    addresses: Number(arg('addresses', 100_000)),
    distribution: arg('distribution', 'uniform'),
    seed: Number(arg('seed', 1)),
    keyPrefix: arg('key-prefix', 'b'),
  };
}

/** mulberry32: small, fast, seeded. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function addressPicker({ distribution, addresses }, next) {
  if (distribution === 'cycle') return (i) => (i * 7919) % addresses;
  if (distribution === 'uniform') return () => Math.floor(next() * addresses);
  if (distribution === 'zipf') {
    // Inverse of the cumulative weights 1/k, by binary search.
    const cumulative = new Float64Array(addresses);
    let sum = 0;
    for (let k = 0; k < addresses; k++) cumulative[k] = sum += 1 / (k + 1);
    return () => {
      const target = next() * sum;
      let lo = 0;
      let hi = addresses - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cumulative[mid] < target) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
  }
  throw new Error(`unknown distribution ${distribution}`);
}

const address = (a) => `0x${a.toString(16).padStart(40, '0')}`;
const T0 = Date.parse('2026-01-01T00:00:00Z');
const FOUR_WEEKS_S = 28 * 24 * 3600;

/** The records as NDJSON lines, header records first. */
function* lines(opts) {
  yield JSON.stringify({ type: 'space', id: 1, name: 'Bench' });
  yield JSON.stringify({
    type: 'sprint',
    id: 1,
    spaceId: 1,
    name: 'A',
    startTime: '2026-01-01T00:00:00Z',
    endTime: '2026-01-15T00:00:00Z',
  });
  yield JSON.stringify({
    type: 'sprint',
    id: 2,
    spaceId: 1,
    name: 'B',
    startTime: '2026-01-15T00:00:00Z',
    endTime: '2026-01-29T00:00:00Z',
  });
  const next = random(opts.seed);
  const pick = addressPicker(opts, next);
  for (let i = 0; i < opts.records; i++) {
    const a = pick(i);
    const points =
      opts.distribution === 'cycle'
        ? 1 + (i % 50)
        : next() < 0.02
          ? -1 - Math.floor(next() * 20)
          : 1 + Math.floor(next() * 100);
    const at = new Date(T0 + Math.floor(next() * FOUR_WEEKS_S) * 1000).toISOString();
    yield `{"type":"points","key":"${opts.keyPrefix}${i}","spaceId":1,"address":"${address(a)}","points":${points},"occurredAt":"${at}"}`;
  }
}

module.exports = { lines, options };

if (require.main === module) {
  const opts = options(process.argv);
  if (!opts.out) {
    console.error(
      'usage: node bench/ingest-file.js OUT [--records N] [--addresses A] [--distribution uniform|zipf|cycle]',
    );
    process.exit(2);
  }
  const stream = createWriteStream(opts.out);
  const source = lines(opts);
  const write = () => {
    for (;;) {
      const { value, done } = source.next();
      if (done) return stream.end();
      if (!stream.write(`${value}\n`)) return stream.once('drain', write);
    }
  };
  write();
}
