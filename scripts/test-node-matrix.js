#!/usr/bin/env node
// Runs the jest suite under other Node majors (`node scripts/test-node-matrix.js 22 24`, or
// `... 22 -- path/to/spec` for some specs only),
// after `npm run test:all` has built and tested on the machine's own Node.
//
// On SQLite only (TEST_DATABASES=sqlite), without the specs of database servers' faults
// (SERVER_FAULT_SPECS): what differs between Node majors is Node itself (its native addon ABI, on
// which better-sqlite3 and its worker-thread reads sit, fetch, streams, crypto, Fastify and Nest
// on it), and all of that runs the same on any database. The server drivers (mysql2, pg) are
// plain JavaScript speaking to the same servers: the machine's Node runs every spec on MariaDB
// and PostgreSQL (npm run test:all), and a third and fourth pass over them would add some
// 20 minutes to CI for nothing a Node major changes.
//
// better-sqlite3 is a native addon. Up to Node 22 the installed one (12.x, built for one Node ABI)
// is compiled for each major (kept in ~/.cache per addon version and ABI, so a later run reuses
// it). From Node 24 on, 12.x aborts the process when the GC finalizes a statement (Node 24's
// ObjectWrap removes a cleanup hook without an environment: WiseLibs/better-sqlite3#1515), so the
// suite runs there with better-sqlite3 13 (Node-API, Node 22+), which hosts on Node 24 must use:
// it is installed into ~/.cache and linked in place of the installed one. Everything is put back
// at the end.
/* eslint-disable */
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { nodeFor } = require('./node-versions');

const root = path.join(__dirname, '..');
const addon = path.join(root, 'node_modules', 'better-sqlite3');
const built = path.join(addon, 'build', 'Release', 'better_sqlite3.node');
const addonVersion = JSON.parse(fs.readFileSync(path.join(addon, 'package.json'), 'utf8')).version;
const cache = path.join(os.homedir(), '.cache', 'loyalty-node');
const nodeGyp = path.join(
  path.dirname(
    fs.realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim()),
  ),
  '..',
  'node_modules',
  'node-gyp',
  'bin',
  'node-gyp.js',
);
const log = (line) => process.stderr.write(`[node-matrix] ${line}\n`);
/** The first Node major that needs better-sqlite3 13, and the version taken for it. */
const NODE_API_ADDON_FROM = 24;
const NODE_API_ADDON = '13.2.0';
const parked = path.join(root, 'node_modules', '.better-sqlite3-installed');

/** Links better-sqlite3 13 (installed once into ~/.cache with `node`) in place of the installed one. */
function useNodeApiAddon(node) {
  const prefix = path.join(cache, `better-sqlite3-${NODE_API_ADDON}`);
  const installed = path.join(prefix, 'node_modules', 'better-sqlite3');
  if (!fs.existsSync(path.join(installed, 'package.json')))
    execFileSync(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--no-save',
        '--no-audit',
        '--no-fund',
        `better-sqlite3@${NODE_API_ADDON}`,
      ],
      { env: { ...process.env, ...node.env }, stdio: ['ignore', 'ignore', 'inherit'] },
    );
  if (!fs.existsSync(parked)) fs.renameSync(addon, parked);
  fs.rmSync(addon, { recursive: true, force: true });
  fs.symlinkSync(installed, addon, 'dir');
}

/** Puts the installed better-sqlite3 back, with the machine's own build. */
function restoreInstalledAddon(own) {
  if (fs.existsSync(parked)) {
    fs.rmSync(addon, { recursive: true, force: true });
    fs.renameSync(parked, addon);
  }
  // node-gyp clears build/ before it compiles, so a failed compile leaves no folder to write to.
  fs.mkdirSync(path.dirname(built), { recursive: true });
  fs.writeFileSync(built, own);
}

/** Puts a better-sqlite3 build for `node`'s ABI in place, compiling it once per ABI. */
function useAddonFor(node) {
  const abi = execFileSync(node.bin, ['-p', 'process.versions.modules'], {
    encoding: 'utf8',
  }).trim();
  const cached = path.join(cache, `better-sqlite3-${addonVersion}-abi${abi}.node`);
  if (!fs.existsSync(cached)) {
    log(`compiling better-sqlite3 ${addonVersion} for Node ${node.version} (ABI ${abi})`);
    const started = Date.now();
    execFileSync(node.bin, [nodeGyp, 'rebuild', '--release', '-j', String(os.cpus().length)], {
      cwd: addon,
      env: { ...process.env, ...node.env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    fs.mkdirSync(cache, { recursive: true });
    fs.copyFileSync(built, cached);
    log(`compiled in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  }
  fs.copyFileSync(cached, built);
}

/** Specs of replication, locks and outages of the database servers: not run here (see above). */
const SERVER_FAULT_SPECS = [
  'test/integration/operations.spec.ts',
  'test/integration/read-replicas.spec.ts',
  'test/integration/scale-out.spec.ts',
  'test/integration/migration-lock.spec.ts',
];

const separator = process.argv.indexOf('--');
const majors = process.argv.slice(2, separator === -1 ? undefined : separator).map(Number);
const jestArgs = separator === -1 ? [] : process.argv.slice(separator + 1);
if (majors.length === 0 || majors.some((major) => !Number.isInteger(major))) {
  console.error('usage: node scripts/test-node-matrix.js MAJOR [MAJOR...] [-- JEST_ARGS...]');
  process.exit(2);
}
const own = fs.readFileSync(built);
const results = [];
try {
  for (const major of majors) {
    const node = nodeFor(major);
    restoreInstalledAddon(own);
    if (major >= NODE_API_ADDON_FROM) useNodeApiAddon(node);
    else useAddonFor(node);
    const addonUsed = JSON.parse(fs.readFileSync(path.join(addon, 'package.json'), 'utf8')).version;
    log(`better-sqlite3 ${addonUsed} on Node ${node.version}`);
    log(`jest on Node ${node.version}`);
    const started = Date.now();
    const run = spawnSync(
      node.bin,
      [
        path.join(root, 'node_modules', 'jest', 'bin', 'jest.js'),
        '--runInBand',
        ...SERVER_FAULT_SPECS.map((spec) => `--testPathIgnorePatterns=${spec}`),
        ...jestArgs,
      ],
      {
        cwd: root,
        env: { ...process.env, ...node.env, TEST_DATABASES: 'sqlite' },
        stdio: 'inherit',
      },
    );
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    results.push({ node: node.version, passed: run.status === 0, seconds });
    log(`Node ${node.version}: ${run.status === 0 ? 'passed' : 'FAILED'} in ${seconds} s`);
  }
} finally {
  restoreInstalledAddon(own);
}
for (const { node, passed, seconds } of results)
  log(`${node.padEnd(10)} ${passed ? 'passed' : 'FAILED'} ${seconds} s`);
process.exit(results.every((result) => result.passed) ? 0 : 1);
