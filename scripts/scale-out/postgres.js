// Two private PostgreSQL servers for specs and scripts/scale-out.js: a primary and a hot standby
// made from it with pg_basebackup -R, streaming its WAL through a replication slot. Each has its
// own data directory and port under the caller's scratch folder, and no Unix socket, so they never
// touch the machine's own cluster on 5432 (which other tests use).
/* eslint-disable */
'use strict';
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require('pg');
const {
  findExecutable,
  freePort,
  run,
  start,
  stopProcess,
  tailOf,
  waitFor,
} = require('./processes');

const DATABASE = 'loyalty';
/** The superuser initdb creates, whoever runs it: the URLs name it. */
const SUPERUSER = 'postgres';
/** The OS user PostgreSQL runs as when this process is root (it refuses to run as root). */
const OS_USER = 'postgres';
const TOOLS = ['initdb', 'postgres', 'pg_basebackup'];

/**
 * The folder of initdb, postgres and pg_basebackup: POSTGRES_BIN_DIR, else the newest of
 * Debian's /usr/lib/postgresql/<version>/bin (not on PATH there), else PATH.
 */
function binDir() {
  if (process.env.POSTGRES_BIN_DIR) return process.env.POSTGRES_BIN_DIR;
  const root = '/usr/lib/postgresql';
  let versions = [];
  try {
    versions = fs
      .readdirSync(root)
      .filter((version) =>
        TOOLS.every((tool) => fs.existsSync(path.join(root, version, 'bin', tool))),
      )
      .sort((a, b) => Number(b) - Number(a));
  } catch {
    // not Debian's layout
  }
  if (versions.length > 0) return path.join(root, versions[0], 'bin');
  const initdb = findExecutable('initdb');
  return initdb ? path.dirname(initdb) : null;
}

function tool(name) {
  return path.join(binDir(), name);
}

const asRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** What is missing to start the servers: an empty list when nothing is. */
function postgresMissing() {
  const dir = binDir();
  const missing = TOOLS.filter((name) => !dir || !fs.existsSync(path.join(dir, name))).map(
    (name) => `${name} (Debian: apt-get install -y postgresql, or set POSTGRES_BIN_DIR)`,
  );
  if (asRoot()) {
    if (!findExecutable('setpriv')) missing.push('setpriv (Debian: apt-get install -y util-linux)');
    if (!userIds())
      missing.push(`an OS user "${OS_USER}" to run PostgreSQL as (it refuses to run as root)`);
  }
  return missing;
}

/** The uid and gid of OS_USER, or null when there is no such user. */
function userIds() {
  try {
    const id = (flag) => Number(execFileSync('id', [flag, OS_USER], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return null;
  }
}

/**
 * A program's command line: as root, run as OS_USER through setpriv, which execs it in place, so
 * the child's pid is the program's (runuser stays as its parent): the postmaster can be signalled,
 * and is killed when this process exits.
 */
function asUser(file, args) {
  if (!asRoot()) return [file, args];
  const { uid, gid } = userIds();
  return [
    findExecutable('setpriv'),
    [`--reuid=${uid}`, `--regid=${gid}`, '--init-groups', '--', file, ...args],
  ];
}

const command = (name, args) => asUser(tool(name), args);

/** The environment of the programs: no PG* variable of the caller's steers them elsewhere. */
function toolEnv() {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) if (!/^PG/.test(name)) env[name] = value;
  return env;
}

/** Creates a folder for a data directory, owned by the user PostgreSQL runs as. */
function makeDataDir(dir) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (asRoot()) {
    const { uid, gid } = userIds();
    fs.chownSync(dir, uid, gid);
  }
}

/** Runs a PostgreSQL program to completion; throws with its output when it fails. */
async function runTool(name, args, cwd) {
  const [file, argv] = command(name, args);
  const result = await run(file, argv, { env: toolEnv(), cwd });
  if (result.code !== 0)
    throw new Error(`${name} failed (exit ${result.code}):\n${result.stdout}${result.stderr}`);
  return result;
}

/** Runs statements on one server as the superuser (trust over TCP), by default on `loyalty`. */
function query(server, sql, params, database = DATABASE) {
  return ask(server, sql, params, database, 5_000);
}

async function ask(server, sql, params, database, connectMs) {
  const client = new Client({
    host: '127.0.0.1',
    port: server.port,
    user: SUPERUSER,
    database,
    connectionTimeoutMillis: connectMs,
    query_timeout: 30_000,
  });
  // A server that goes away emits an error on the client: unheard, it would end the process.
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rows } = await client.query(sql, params);
    return rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The settings of both servers, on the command line: a standby needs the same max_connections and
 * worker limits as its primary, and a copied data directory must not bring the primary's port.
 */
function settings(port) {
  return {
    port: String(port),
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    // Scratch data: durability buys nothing, and syncs make startup and every commit slow.
    fsync: 'off',
    full_page_writes: 'off',
    shared_buffers: '32MB',
    max_connections: '100',
    wal_level: 'replica',
    max_wal_senders: '5',
    max_replication_slots: '5',
    hot_standby: 'on',
    // Without it, vacuum on the primary can cancel a long read on the standby (a rank-index load).
    hot_standby_feedback: 'on',
    log_line_prefix: '%m [%p] %q%a ',
  };
}

/** What a log file holds from byte `offset` on: one attempt's lines. */
function logSince(logFile, offset) {
  try {
    return fs.readFileSync(logFile).subarray(offset).toString('utf8');
  } catch {
    return '';
  }
}

async function startServer({ name, dir, dataDir, log }) {
  const logFile = path.join(dir, `${name}.log`);
  // A free port may be taken before the server binds it: another port, then.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const server = {
      name,
      port,
      dataDir,
      logFile,
      url: `postgres://${SUPERUSER}@127.0.0.1:${port}/${DATABASE}`,
    };
    const args = ['-D', dataDir];
    for (const [setting, value] of Object.entries(settings(port)))
      args.push('-c', `${setting}=${value}`);
    const [file, argv] = command('postgres', args);
    fs.appendFileSync(logFile, `\n[postgres.js] starting ${name} on 127.0.0.1:${port}\n`);
    const logFrom = fs.statSync(logFile).size;
    server.process = start(file, argv, { env: toolEnv(), logFile, cwd: dataDir });
    try {
      // waitFor retries a check that throws: an exit ends the wait by answering, not throwing.
      const answered = await waitFor(
        async () => {
          if (!server.process.running()) return 'exited';
          // 'postgres': the service's database may not exist yet (or not yet on the standby).
          // A short connect timeout: whoever took the port may accept and never answer.
          await ask(server, 'SELECT 1', [], 'postgres', 1_000);
          return 'answered';
        },
        { timeoutMs: 60_000, everyMs: 100, what: `postgres (${name}) did not answer` },
      );
      if (answered === 'exited') {
        const { code, signal } = await server.process.exited;
        throw new Error(`postgres (${name}) exited (${signal ?? `code ${code}`})`);
      }
      log(`PostgreSQL ${name} on 127.0.0.1:${port} (${dataDir})`);
      return server;
    } catch (error) {
      await stopProcess(server.process, 'SIGINT', 10_000);
      const tail = tailOf(logFile);
      if (
        attempt < 3 &&
        /could not bind|could not create any TCP\/IP sockets/.test(logSince(logFile, logFrom))
      )
        continue;
      throw new Error(`${error.message}\n--- ${logFile} ---\n${tail}`);
    }
  }
}

/**
 * Initialises the primary, starts it, copies it with pg_basebackup -R (which leaves the copy a
 * standby of it, following a slot of its own), starts the standby, then creates the service's
 * database on the primary: resolves once the standby has replayed it, with both servers' handles.
 */
async function startPostgresPair({ dir, log }) {
  const missing = postgresMissing();
  if (missing.length > 0) throw new Error(`PostgreSQL replicas need ${missing.join(', ')}`);
  const primaryData = path.join(dir, 'primary-data');
  const replicaData = path.join(dir, 'replica-data');
  // OS_USER must reach the data directories inside: searching the folder is enough.
  if (asRoot()) fs.chmodSync(dir, fs.statSync(dir).mode | 0o001);
  makeDataDir(primaryData);
  makeDataDir(replicaData);
  // spawnSync: run() writes to the child's stdin, which fails (EPIPE) once `test` has exited.
  const writable = spawnSync(...asUser('test', ['-w', primaryData]));
  if (writable.status !== 0)
    throw new Error(
      `PostgreSQL runs as the OS user "${OS_USER}", who cannot write ${primaryData}: every folder above it must be searchable by others (chmod o+x)`,
    );
  await runTool(
    'initdb',
    [
      '-D',
      primaryData,
      '-U',
      SUPERUSER,
      '--auth=trust',
      '--encoding=UTF8',
      '--locale=C.UTF-8',
      '--no-sync',
      '--no-instructions',
    ],
    primaryData,
  );
  fs.writeFileSync(
    path.join(primaryData, 'pg_hba.conf'),
    [
      '# TYPE  DATABASE     USER  ADDRESS       METHOD',
      'host    all          all   127.0.0.1/32  trust',
      'host    replication  all   127.0.0.1/32  trust',
      '',
    ].join('\n'),
  );

  const servers = {};
  try {
    servers.primary = await startServer({ name: 'primary', dir, dataDir: primaryData, log });
    const { primary } = servers;
    await runTool(
      'pg_basebackup',
      [
        '-h',
        '127.0.0.1',
        '-p',
        String(primary.port),
        '-U',
        SUPERUSER,
        '-D',
        replicaData,
        '--write-recovery-conf',
        '--wal-method=stream',
        '--create-slot',
        '--slot=replica',
        '--checkpoint=fast',
        '--no-sync',
      ],
      replicaData,
    );
    servers.replica = await startServer({ name: 'replica', dir, dataDir: replicaData, log });
    const { replica } = servers;
    await query(
      primary,
      `CREATE DATABASE ${DATABASE} ENCODING 'UTF8' TEMPLATE template0`,
      [],
      'postgres',
    );
    await waitFor(() => replicaCaughtUp(primary, replica), {
      timeoutMs: 30_000,
      what: 'the standby did not catch up with the primary',
    }).catch(async (error) => {
      const receiver = await query(replica, 'SELECT * FROM pg_stat_wal_receiver', [], 'postgres')
        .then((rows) => JSON.stringify(rows[0] ?? {}))
        .catch((failure) => failure.message);
      throw new Error(
        `${error.message}: ${receiver}\n--- ${replica.logFile} ---\n${tailOf(replica.logFile)}`,
      );
    });
    const [{ lsn }] = await query(primary, 'SELECT CAST(pg_current_wal_lsn() AS text) AS lsn');
    log(`PostgreSQL standby streams from the primary (WAL ${lsn})`);
    return servers;
  } catch (error) {
    await stopPostgres(servers);
    throw error;
  }
}

/**
 * Whether the standby streams from the primary, replays (not paused), and has replayed all the
 * WAL the primary has written: every commit the primary has acknowledged. Written, not inserted:
 * at a page boundary the insert location points past a page header no replay ever reaches.
 */
async function replicaCaughtUp(primary, replica) {
  const [{ position }] = await query(
    primary,
    'SELECT CAST(pg_current_wal_lsn() AS text) AS position',
    [],
    'postgres',
  );
  const [row] = await query(
    replica,
    `SELECT pg_last_wal_replay_lsn() >= CAST($1 AS pg_lsn) AS reached,
            pg_get_wal_replay_pause_state() AS pause,
            (SELECT status FROM pg_stat_wal_receiver) AS receiver`,
    [position],
    'postgres',
  );
  return row.reached === true && row.pause === 'not paused' && row.receiver === 'streaming';
}

/**
 * Stops applying WAL on the standby (it keeps receiving it, and answering): resolves once replay
 * has actually paused, so nothing written after this is applied until resumeReplay.
 */
async function pauseReplay(replica) {
  await query(replica, 'SELECT pg_wal_replay_pause()', [], 'postgres');
  await waitFor(
    async () => {
      const [{ state }] = await query(
        replica,
        'SELECT pg_get_wal_replay_pause_state() AS state',
        [],
        'postgres',
      );
      return state === 'paused';
    },
    { timeoutMs: 10_000, everyMs: 20, what: 'replay on the standby did not pause' },
  );
}

async function resumeReplay(replica) {
  await query(replica, 'SELECT pg_wal_replay_resume()', [], 'postgres');
}

/** The postmaster's pid and those of the processes it started (backends, walreceiver, startup). */
function serverPids(server) {
  const postmaster = server.process.child.pid;
  const children = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) children.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return [postmaster, ...children];
}

/**
 * Sends `signal` to the postmaster and every process it started: each backend is a process of its
 * own, which a signal to the postmaster alone does not reach. SIGSTOP thus freezes the whole server,
 * its open connections too, as a dead host would (neither answering nor resetting), and SIGCONT
 * wakes it. The postmaster goes first, so that it starts no process the signal would miss.
 */
function signalServer(server, signal) {
  if (!server?.process?.running()) return;
  for (const pid of serverPids(server)) {
    try {
      process.kill(pid, signal);
    } catch {
      // exited meanwhile
    }
  }
}

/**
 * Shuts both servers down (fast: open connections are cut), the standby first, since a primary
 * shutting down waits for its standbys to receive the last of its WAL. A frozen server is woken
 * first; one that takes over 30 s is killed.
 */
async function stopPostgres(servers) {
  for (const server of [servers.replica, servers.primary]) {
    if (!server?.process) continue;
    signalServer(server, 'SIGCONT');
    await stopProcess(server.process, 'SIGINT', 30_000);
  }
}

module.exports = {
  DATABASE,
  pauseReplay,
  postgresMissing,
  query,
  replicaCaughtUp,
  resumeReplay,
  signalServer,
  startPostgresPair,
  stopPostgres,
  tailOf,
};
