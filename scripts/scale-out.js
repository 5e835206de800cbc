#!/usr/bin/env node
// The topology of deploy/compose.yaml from local processes, where there is no Docker engine: a
// MariaDB primary and a GTID replica (two private mariadbd processes on free ports, their data in
// a temporary folder), the machine's Redis (a database number of its own), N instances of the
// built service (node dist/src/host/main.js) and Debian's haproxy with deploy/haproxy.cfg in front.
//
//   node scripts/scale-out.js [--instances 3] [--db mariadb|sqlite] [--port 8080] [--keep]
//
// It prints the endpoints and a token (scopes query and ingest), then runs until Ctrl-C, and stops
// everything it started, removing the temporary folder (--keep leaves it, logs included). Needs
// `npm run build` (dist/), mariadbd and mariadb-install-db, haproxy (apt-get install -y haproxy),
// and Redis at SCALE_OUT_REDIS_URL (default redis://127.0.0.1:6379/9). --db sqlite: one SQLite
// file and no replica (SQLite is one machine's database; use one instance).
//
// As a module (test/integration/scale-out.spec.ts, bench/scale-out.js):
//   const { startTopology } = require('./scripts/scale-out');
//   const topology = await startTopology({ instances: 3, env: { RATE_LIMIT_TOKEN: '5/1m' } });
//   topology.balancer.url; topology.instances[0].url; await topology.instances[1].kill();
//   await topology.instances[1].restart(); await topology.cli(['token', 'create', ...]);
//   await topology.sql('replica', 'SELECT ...'); await topology.stop();
// Whatever it started is killed when the calling process exits, even without stop().
/* eslint-disable */
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { randomBytes } = require('node:crypto');
const {
  findExecutable,
  freePort,
  removeOnExit,
  run,
  start,
  stopProcess,
  tailOf,
  waitFor,
} = require('./scale-out/processes');
const {
  DATABASE,
  mariadbMissing,
  query,
  startMariadbPair,
  stopMariadb,
} = require('./scale-out/mariadb');
const { haproxyMissing, startHaproxy, stopHaproxy } = require('./scale-out/haproxy');

const ROOT = path.join(__dirname, '..');
const MAIN = path.join(ROOT, 'dist', 'src', 'host', 'main.js');
const CLI = path.join(ROOT, 'dist', 'src', 'host', 'cli', 'main.js');
/** A Redis database of its own, so its rate-limit windows never meet other tests' keys. */
const DEFAULT_REDIS_URL = process.env.SCALE_OUT_REDIS_URL ?? 'redis://127.0.0.1:6379/9';

/**
 * Everything the topology needs that is missing on this machine, each with how to get it; an
 * empty list when nothing is. `database: 'sqlite'` needs no MariaDB, `balancer: false` no haproxy.
 */
function missingPrerequisites({ database = 'mariadb', balancer = true } = {}) {
  const missing = [];
  if (!fs.existsSync(MAIN)) missing.push(`${path.relative(ROOT, MAIN)} (npm run build)`);
  if (database === 'mariadb') missing.push(...mariadbMissing());
  if (balancer) missing.push(...haproxyMissing());
  return missing;
}

/** Environment every instance shares, as compose's x-app block sets it. */
function sharedEnv({ databaseUrl, replicaUrls, redisUrl, cursorSecret, env }) {
  const base = { ...process.env };
  // What a test runner or the caller's shell set must not leak into the instances' configuration.
  for (const name of Object.keys(base)) {
    if (
      /^(DATABASE_|REDIS_|RATE_LIMIT_|RANK_INDEX_|RESPONSE_CACHE|MIGRATE_|PORT$|HOST$)/.test(name)
    )
      delete base[name];
  }
  return {
    ...base,
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    ...(replicaUrls.length > 0 ? { DATABASE_REPLICA_URLS: replicaUrls.join(',') } : {}),
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    CURSOR_SECRET: cursorSecret,
    MIGRATE_ON_START: 'false',
    // Only haproxy on this machine stands in front of them.
    TRUST_PROXY: '127.0.0.1',
    ...env,
  };
}

/** One service instance: its port stays the same across restarts, as a container's would. */
function createInstance({ index, port, dir, env, log }) {
  const name = `app${index + 1}`;
  const logFile = path.join(dir, `${name}.log`);
  const instance = {
    name,
    port,
    url: `http://127.0.0.1:${port}`,
    logFile,
    process: null,
    get pid() {
      return instance.process?.child.pid;
    },
    get running() {
      return Boolean(instance.process?.running());
    },
    /** Starts it (again) and resolves once GET /health/ready answers 200. */
    async start() {
      if (instance.running) throw new Error(`${name} is already running`);
      instance.process = start(process.execPath, [MAIN], {
        env: { ...env, PORT: String(port), HOST: '127.0.0.1' },
        logFile,
        cwd: ROOT,
      });
      await waitFor(
        async () => {
          if (!instance.running)
            throw new Error(`${name} exited while starting:\n${tailOf(logFile)}`);
          const response = await fetch(`${instance.url}/health/ready`);
          return response.status === 200;
        },
        { timeoutMs: 60_000, what: `${name} was not ready` },
      ).catch((error) => {
        throw new Error(`${error.message}\n--- ${logFile}\n${tailOf(logFile)}`);
      });
      log(`${name} (pid ${instance.pid}) on ${instance.url}`);
    },
    /** Kills it at once (SIGKILL by default: no shutdown, as a crash); resolves once it is gone. */
    async kill(signal = 'SIGKILL') {
      await stopProcess(instance.process, signal, 10_000);
    },
    /** A clean shutdown (SIGTERM: in-flight requests finish). */
    async stop() {
      await stopProcess(instance.process, 'SIGTERM', 15_000);
    },
    async restart() {
      await instance.stop();
      await instance.start();
    },
  };
  return instance;
}

/**
 * Starts the topology and resolves with its handles. On any failure everything already started is
 * stopped and the error says what failed, with the tail of its log.
 *
 * options: instances (3), database ('mariadb' | 'sqlite'), replica (true on MariaDB: start the
 * replica and pass DATABASE_REPLICA_URLS), redisUrl (null: no Redis, each instance limits alone),
 * balancer (true: haproxy), balancerPort (a free one), env (added to every instance's environment:
 * RATE_LIMIT_TOKEN, say), keep (leave the temporary folder), log (a line printer).
 */
async function startTopology(options = {}) {
  const {
    instances: count = 3,
    database = 'mariadb',
    replica = true,
    redisUrl = DEFAULT_REDIS_URL,
    balancer: withBalancer = true,
    balancerPort,
    env = {},
    keep = false,
    log = (line) => process.stderr.write(`[scale-out] ${line}\n`),
  } = options;
  if (!['mariadb', 'sqlite'].includes(database))
    throw new Error(`database must be mariadb or sqlite (got ${database})`);
  const missing = missingPrerequisites({ database, balancer: withBalancer });
  if (missing.length > 0)
    throw new Error(`The scale-out topology cannot start; missing: ${missing.join('; ')}`);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-scale-out-'));
  const forget = removeOnExit(dir);
  const topology = {
    dir,
    database,
    mariadb: null,
    databaseUrl: null,
    replicaUrls: [],
    redisUrl,
    cursorSecret: randomBytes(24).toString('hex'),
    instances: [],
    balancer: null,
    /** The operator's CLI on the topology's database: { code, stdout, stderr }. */
    cli: (args, input) =>
      run(process.execPath, [CLI, ...args], {
        env: { ...process.env, DATABASE_URL: topology.databaseUrl, NODE_ENV: 'production' },
        input,
        cwd: ROOT,
      }),
    /** Statements as root on 'primary' or 'replica' (MariaDB only), in the service's database. */
    sql: (server, statement, params) => {
      if (!topology.mariadb) throw new Error('sql() needs the MariaDB topology');
      return query(topology.mariadb[server], statement, params, DATABASE);
    },
    stopped: false,
    /** Stops every process (instances, haproxy, MariaDB) and removes the temporary folder. */
    async stop() {
      if (topology.stopped) return;
      topology.stopped = true;
      await stopHaproxy(topology.balancer);
      await Promise.all(topology.instances.map((instance) => instance.stop()));
      if (topology.mariadb) await stopMariadb(topology.mariadb);
      if (!keep) {
        fs.rmSync(dir, { recursive: true, force: true });
        forget();
      } else log(`kept ${dir}`);
    },
  };

  try {
    if (database === 'mariadb') {
      topology.mariadb = await startMariadbPair({ dir, log });
      topology.databaseUrl = topology.mariadb.primary.url;
      if (replica) topology.replicaUrls = [topology.mariadb.replica.url];
    } else {
      topology.databaseUrl = `sqlite:${path.join(dir, 'loyalty.sqlite')}`;
    }
    // Once, before any instance starts: migrations take no lock against each other.
    const migrated = await topology.cli(['migrate']);
    if (migrated.code !== 0) throw new Error(`migrate failed:\n${migrated.stderr}`);

    const instanceEnv = sharedEnv({ ...topology, env });
    const ports = [];
    for (let index = 0; index < count; index++) ports.push(await freePort());
    topology.instances = ports.map((port, index) =>
      createInstance({ index, port, dir, env: instanceEnv, log }),
    );
    await Promise.all(topology.instances.map((instance) => instance.start()));
    if (withBalancer)
      topology.balancer = await startHaproxy({ dir, ports, port: balancerPort, log });
    return topology;
  } catch (error) {
    await topology.stop().catch(() => undefined);
    throw error;
  }
}

async function main() {
  const arg = (name, fallback) => {
    const i = process.argv.indexOf(`--${name}`);
    return i === -1 ? fallback : process.argv[i + 1];
  };
  const topology = await startTopology({
    instances: Number(arg('instances', 3)),
    database: arg('db', 'mariadb'),
    balancerPort: arg('port') ? Number(arg('port')) : undefined,
    keep: process.argv.includes('--keep'),
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    process.stderr.write('\n');
    await topology.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const token = await topology.cli([
    'token',
    'create',
    '--name',
    'scale-out',
    '--scope',
    'query,ingest',
  ]);
  const lines = [
    '',
    `balancer     ${topology.balancer ? topology.balancer.url : '(none)'}  (/query /ingest /export /dashboard /health/*)`,
    ...topology.instances.map(
      (i) => `${i.name.padEnd(12)} ${i.url}  pid ${i.pid}  log ${i.logFile}`,
    ),
    `database     ${topology.databaseUrl}`,
    ...topology.replicaUrls.map((url) => `replica      ${url}`),
    `redis        ${topology.redisUrl ?? '(none)'}`,
    `token        ${token.stdout.trim() || token.stderr.trim()}`,
    `folder       ${topology.dir}`,
    '',
    'Ctrl-C stops everything.',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (require.main === module) {
  main().catch((error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    process.exit(1);
  });
}

module.exports = { DEFAULT_REDIS_URL, findExecutable, missingPrerequisites, startTopology };
