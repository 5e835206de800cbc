#!/usr/bin/env node
// Writes an NDJSON file of N points records over A addresses (one space, two sprints).
//   node bench/ingest-file.js OUT [--records 1000000] [--addresses 100000]
/* eslint-disable */
const { createWriteStream } = require('node:fs');
const out = process.argv[2];
const arg = (n, d) => {
  const i = process.argv.indexOf(`--${n}`);
  return i === -1 ? d : Number(process.argv[i + 1]);
};
const RECORDS = arg('records', 1_000_000);
const ADDRESSES = arg('addresses', 100_000);
const stream = createWriteStream(out);
const T0 = Date.parse('2026-01-01T00:00:00Z');
stream.write(JSON.stringify({ type: 'space', id: 1, name: 'Bench' }) + '\n');
stream.write(
  JSON.stringify({
    type: 'sprint',
    id: 1,
    spaceId: 1,
    name: 'A',
    startTime: '2026-01-01T00:00:00Z',
    endTime: '2026-01-15T00:00:00Z',
  }) + '\n',
);
stream.write(
  JSON.stringify({
    type: 'sprint',
    id: 2,
    spaceId: 1,
    name: 'B',
    startTime: '2026-01-15T00:00:00Z',
    endTime: '2026-02-01T00:00:00Z',
  }) + '\n',
);
let i = 0;
function write() {
  let ok = true;
  while (i < RECORDS && ok) {
    const a = (i * 7919) % ADDRESSES;
    ok = stream.write(
      `{"type":"points","key":"b${i}","spaceId":1,"address":"0x${a.toString(16).padStart(40, '0')}","points":${1 + (i % 50)},"occurredAt":"${new Date(T0 + (i % 2_592_000) * 1000).toISOString()}"}\n`,
    );
    i++;
  }
  if (i < RECORDS) stream.once('drain', write);
  else stream.end();
}
write();
