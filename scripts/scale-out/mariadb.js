// Two private MariaDB servers for scripts/scale-out.js: a primary with a binary log and GTIDs, and
// a replica following it with MASTER_USE_GTID=slave_pos, as in deploy/compose.yaml. Each has its
// own data directory, port and socket under the topology's scratch folder, so they never touch
// the machine's own server on 3306 (which other tests use, and which has no binary log).
/* eslint-disable */
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { createConnection } = require('mysql2/promise');
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
/** The service's user, and the replica's: created on the primary, replicated like the rest. */
const SERVICE_USER = { user: 'loyalty', password: 'loyalty-scale-out' };
const REPLICATION_USER = { user: 'replication', password: 'replication-scale-out' };

/** What is missing to start the servers: an empty list when nothing is. */
function mariadbMissing() {
  return ['mariadbd', 'mariadb-install-db']
    .filter((name) => !findExecutable(name))
    .map((name) => `${name} (Debian: apt-get install -y mariadb-server)`);
}

/** mariadbd refuses to run as root unless told to; any other user runs it as itself. */
function userArgs() {
  return [`--user=${os.userInfo().username}`];
}

/** Runs statements on one server, as root over its socket (root has no TCP account here). */
async function query(server, sql, params, database) {
  const connection = await createConnection({
    socketPath: server.socket,
    user: 'root',
    database,
    multipleStatements: true,
  });
  try {
    const [rows] = await connection.query(sql, params);
    return rows;
  } finally {
    await connection.end();
  }
}

async function startServer({ name, dir, dataDir, serverArgs, log }) {
  const port = await freePort();
  const server = {
    name,
    port,
    socket: path.join(dir, `${name}.sock`),
    logFile: path.join(dir, `${name}.log`),
    url: `mysql://${SERVICE_USER.user}:${SERVICE_USER.password}@127.0.0.1:${port}/${DATABASE}`,
  };
  const args = [
    '--no-defaults',
    ...userArgs(),
    `--datadir=${dataDir}`,
    `--port=${port}`,
    '--bind-address=127.0.0.1',
    `--socket=${server.socket}`,
    `--pid-file=${path.join(dir, `${name}.pid`)}`,
    `--log-error=${server.logFile}`,
    `--log-basename=${name}`,
    '--skip-name-resolve',
    '--character-set-server=utf8mb4',
    '--innodb-buffer-pool-size=256M',
    '--gtid-strict-mode=ON',
    ...serverArgs,
  ];
  server.process = start(findExecutable('mariadbd'), args, {
    env: process.env,
    logFile: server.logFile,
  });
  await waitFor(
    async () => {
      if (!server.process.running())
        throw new Error(`mariadbd (${name}) exited:\n${tailOf(server.logFile)}`);
      await query(server, 'SELECT 1');
      return true;
    },
    { timeoutMs: 60_000, everyMs: 200, what: `mariadbd (${name}) did not answer` },
  ).catch((error) => {
    throw new Error(`${error.message}\n${tailOf(server.logFile)}`);
  });
  log(`MariaDB ${name} on 127.0.0.1:${port} (${dataDir})`);
  return server;
}

/**
 * Initialises one data directory, copies it for the replica (a copy is the same empty server, and
 * faster than a second install), starts both, creates the database and users on the primary
 * (written to its binary log, so replicated) and points the replica at the primary's first GTID.
 * Resolves once the replica has replayed all of it, with both servers' handles.
 */
async function startMariadbPair({ dir, log }) {
  const missing = mariadbMissing();
  if (missing.length > 0) throw new Error(`scale-out needs ${missing.join(', ')}`);
  const primaryData = path.join(dir, 'primary-data');
  const replicaData = path.join(dir, 'replica-data');
  const installed = await run(findExecutable('mariadb-install-db'), [
    '--no-defaults',
    ...userArgs(),
    `--datadir=${primaryData}`,
    '--auth-root-authentication-method=normal',
    '--skip-test-db',
    '--skip-name-resolve',
  ]);
  if (installed.code !== 0)
    throw new Error(`mariadb-install-db failed:\n${installed.stdout}${installed.stderr}`);
  fs.cpSync(primaryData, replicaData, { recursive: true });

  const servers = {};
  try {
    servers.primary = await startServer({
      name: 'primary',
      dir,
      dataDir: primaryData,
      serverArgs: ['--server-id=1', '--log-bin', '--binlog-format=ROW'],
      log,
    });
    servers.replica = await startServer({
      name: 'replica',
      dir,
      dataDir: replicaData,
      serverArgs: ['--server-id=2', '--read-only=ON'],
      log,
    });
    const { primary, replica } = servers;
    await query(
      primary,
      `CREATE DATABASE ${DATABASE} CHARACTER SET utf8mb4;
       CREATE USER '${SERVICE_USER.user}'@'127.0.0.1' IDENTIFIED BY '${SERVICE_USER.password}';
       GRANT ALL PRIVILEGES ON ${DATABASE}.* TO '${SERVICE_USER.user}'@'127.0.0.1';
       CREATE USER '${REPLICATION_USER.user}'@'127.0.0.1' IDENTIFIED BY '${REPLICATION_USER.password}';
       GRANT REPLICATION SLAVE ON *.* TO '${REPLICATION_USER.user}'@'127.0.0.1';`,
    );
    await query(
      replica,
      `CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${primary.port},
         MASTER_USER='${REPLICATION_USER.user}', MASTER_PASSWORD='${REPLICATION_USER.password}',
         MASTER_CONNECT_RETRY=1, MASTER_USE_GTID=slave_pos;
       START SLAVE;`,
    );
    await waitFor(() => replicaCaughtUp(primary, replica), {
      timeoutMs: 30_000,
      what: 'the replica did not catch up with the primary',
    }).catch(async (error) => {
      const status = await query(replica, 'SHOW SLAVE STATUS').catch(() => []);
      throw new Error(`${error.message}: ${JSON.stringify(status[0] ?? {})}`);
    });
    log(`MariaDB replica replicates from the primary (GTID ${await gtidOf(primary)})`);
    return servers;
  } catch (error) {
    await stopMariadb(servers);
    throw error;
  }
}

/** The primary's current GTID position. */
async function gtidOf(primary) {
  const [row] = await query(primary, 'SELECT @@GLOBAL.gtid_binlog_pos AS pos');
  return row.pos;
}

/** Whether the replica runs both threads and has applied everything the primary logged so far. */
async function replicaCaughtUp(primary, replica) {
  const position = await gtidOf(primary);
  const [status] = await query(replica, 'SHOW SLAVE STATUS');
  if (!status || status.Slave_IO_Running !== 'Yes' || status.Slave_SQL_Running !== 'Yes')
    return false;
  const [row] = await query(replica, 'SELECT @@GLOBAL.gtid_slave_pos AS pos');
  return row.pos === position;
}

/** Shuts both servers down cleanly (SIGTERM), killing one that takes over 30 s. */
async function stopMariadb(servers) {
  await Promise.all(
    Object.values(servers).map((server) => stopProcess(server.process, 'SIGTERM', 30_000)),
  );
}

module.exports = {
  DATABASE,
  mariadbMissing,
  query,
  replicaCaughtUp,
  startMariadbPair,
  stopMariadb,
  tailOf,
};
