#!/usr/bin/env node
// Proves that the packed tarballs install and work where our users put them: each fixture under
// test/hosts is copied to a scratch folder, installs its own packages with a plain `npm install`,
// then our tarball the way a user would (`npm install <tarball>`), compiles, and runs its test.
// Prints a table fixture x step, one of NestJS host x database, and exits non-zero on any failure.
//
//   node scripts/test-hosts.js [REPO_ROOT] [--only NAME]... [--jobs N] [--keep] [--verbose]
//                              [--server-tarball FILE] [--client-tarball FILE]
//   node scripts/test-hosts.js [REPO_ROOT] --write-snippets   (README's snippet into the hosts)
//
// It builds nothing: run `npm run build` in REPO_ROOT first (dist/ and packages/client/dist); it
// packs both packages, unless given tarballs to test instead (a release's, say). --jobs: fixtures
// at once (default 2). The NestJS hosts run on SQLite, MariaDB at HOSTS_MYSQL_URL (default
// mysql://root@127.0.0.1:3306) and PostgreSQL at HOSTS_POSTGRES_URL (default
// postgres://postgres@127.0.0.1:5432), and fail when a server does not answer. npm's cache is
// shared between the fixtures (npm's own, or npm_config_cache). test/hosts/README.md has more.
/* eslint-disable */
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

const SERVER_PACKAGE = 'loyalty-leaderboard';
const CLIENT_PACKAGE = 'loyalty-leaderboard-client';
/** NestJS hosts prove the library; client hosts the client alone, against a running service. */
const FIXTURES = [
  { name: 'nest11-express', kind: 'nest' },
  { name: 'nest11-fastify', kind: 'nest' },
  { name: 'nest12-esm', kind: 'nest' },
  { name: 'client-esm', kind: 'client' },
  { name: 'client-ts', kind: 'client' },
];
/** The table's columns. Test names start with `<step>:`; the runner's own steps are the others. */
const STEPS = ['install', 'snippet', 'compile', 'boot', 'cli', 'ingest', 'walk', 'errors'];
const TEST_STEPS = {
  nest: ['boot', 'cli', 'ingest', 'walk', 'errors'],
  client: ['install', 'walk', 'errors'],
};
/**
 * The databases a fixture's test must run on, as its describes name them (`<fixture> on <name>`):
 * one missing fails the fixture, so a spec left out cannot pass for a database tested.
 */
const DATABASES = { nest: ['SQLite', 'MariaDB', 'PostgreSQL'], client: [] };
/** The NestJS hosts' test, kept once in test/hosts and copied into each host's scratch copy. */
const SHARED_SUITE = 'host-suite.ts';
const README_HEADING = 'Using it as a NestJS module';
const COMMAND_TIMEOUT_MS = 15 * 60_000;
const DEMO_ENTRIES = 300;

function parseArgs(argv) {
  const options = {
    root: path.resolve(__dirname, '..'),
    only: [],
    jobs: 2,
    keep: false,
    verbose: false,
    serverTarball: undefined,
    clientTarball: undefined,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--only') options.only.push(argv[++i]);
    else if (arg === '--jobs') options.jobs = Math.max(1, Number(argv[++i]) || 1);
    else if (arg === '--keep') options.keep = true;
    else if (arg === '--verbose') options.verbose = true;
    else if (arg === '--write-snippets') options.writeSnippets = true;
    else if (arg === '--server-tarball') options.serverTarball = path.resolve(argv[++i]);
    else if (arg === '--client-tarball') options.clientTarball = path.resolve(argv[++i]);
    else if (arg === '--help' || arg === '-h') {
      console.log(fs.readFileSync(__filename, 'utf8').split('\n').slice(1, 16).join('\n'));
      process.exit(0);
    } else if (arg.startsWith('-')) throw new Error(`unknown option ${arg}`);
    else options.root = path.resolve(arg);
  }
  for (const name of options.only) {
    if (!FIXTURES.some((f) => f.name === name)) {
      throw new Error(
        `--only ${name}: no such fixture (${FIXTURES.map((f) => f.name).join(', ')})`,
      );
    }
  }
  return options;
}

/** Runs a command; resolves with its exit code and combined output (also written to `log`). */
function run(command, args, { cwd, env, log, verbose, timeoutMs = COMMAND_TIMEOUT_MS }) {
  return new Promise((resolve) => {
    const out = fs.createWriteStream(log, { flags: 'a' });
    out.write(`$ ${[command, ...args].join(' ')}   (in ${cwd})\n`);
    const child = spawn(command, args, {
      cwd,
      env: env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const take = (chunk) => {
      output += chunk;
      out.write(chunk);
      if (verbose) process.stdout.write(chunk);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    const timer = setTimeout(() => {
      take(`\n[test-hosts] timed out after ${timeoutMs / 1000} s: killing it\n`);
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('error', (error) => take(`\n[test-hosts] ${error.message}\n`));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      out.end(`\n[exit ${code ?? signal}]\n\n`);
      resolve({ code: code ?? 1, output });
    });
  });
}

function tail(text, lines = 40) {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}

function copyFixture(from, to) {
  fs.cpSync(from, to, {
    recursive: true,
    filter: (source) =>
      !/[\\/](node_modules|dist|coverage)$|\.tsbuildinfo$|package-lock\.json$/.test(source),
  });
}

// ---------- npm's peer warnings ----------

/**
 * The ERESOLVE / peer blocks npm printed: each opens with `npm warn ERESOLVE ...` (or `npm error
 * code ERESOLVE`) and goes on over the `npm warn`/`npm error` lines that follow it.
 */
function peerBlocks(output) {
  const blocks = [];
  let current = null;
  for (const line of output.split('\n')) {
    const match = /^npm (?:warn|WARN|error|ERR!)\s?(.*)$/.exec(line);
    if (!match) {
      current = null;
      continue;
    }
    const text = match[1];
    if (/^ERESOLVE\b|^peer dep|^EPEER/i.test(text)) {
      current = { lines: [line], subject: '' };
      blocks.push(current);
    } else if (/^(EBADENGINE|install-scripts|deprecated|code |cleanup)/.test(text)) {
      current = null;
    } else if (current) {
      current.lines.push(line);
      const subject = /While resolving: (\S+)/.exec(text);
      if (subject) current.subject = subject[1].replace(/@[^@]*$/, '');
    }
  }
  return blocks;
}

/**
 * Blocks that are our package's: it is the one resolving, or it stands in the unresolved or
 * conflicting peer's chain; or it is named at all in a block that the host's own install (before
 * our package) did not print. Other blocks are the host's stack's own, reported as notes.
 */
function ourPeerWarnings(hostInstall, ourInstall, names) {
  const before = new Set(peerBlocks(hostInstall).map((b) => b.subject));
  const named = (line) =>
    names.some((n) => line.includes(`${n}@`) || new RegExp(`\\b${n}\\b`).test(line));
  const ours = [];
  const foreign = [];
  for (const block of peerBlocks(ourInstall)) {
    let section = '';
    let inChain = names.includes(block.subject);
    for (const line of block.lines) {
      if (/Could not resolve dependency:|Conflicting peer dependency:/.test(line))
        section = 'chain';
      else if (/Found:/.test(line)) section = 'found';
      if (section === 'chain' && named(line)) inChain = true;
    }
    const anywhere = block.lines.some(named);
    if (inChain || (anywhere && !before.has(block.subject))) ours.push(block);
    else foreign.push(block);
  }
  return { ours, foreign };
}

// ---------- the README's snippet ----------

/** The fenced ts blocks under the heading named `heading`, up to the next heading of its level. */
function readmeBlocks(readme, heading) {
  const lines = readme.replace(/\r\n/g, '\n').split('\n');
  const start = lines.findIndex(
    (l) => /^#{1,6}\s/.test(l) && l.replace(/^#+\s+/, '').trim() === heading,
  );
  if (start < 0) return null;
  const level = /^#+/.exec(lines[start])[0].length;
  const blocks = [];
  let block = null;
  // Inside another fence (a shell block's # comments), nothing is a heading.
  let otherFence = false;
  for (const line of lines.slice(start + 1)) {
    if (block) {
      if (/^```\s*$/.test(line)) {
        blocks.push(block.join('\n'));
        block = null;
      } else block.push(line);
      continue;
    }
    if (otherFence) {
      if (/^```\s*$/.test(line)) otherFence = false;
      continue;
    }
    const h = /^(#+)\s/.exec(line);
    if (h && h[1].length <= level) break;
    if (/^```(ts|typescript)\b/.test(line)) block = [];
    else if (/^```/.test(line)) otherFence = true;
  }
  return blocks;
}

/**
 * The region between `// >>> README.md "<heading>"` (optionally ` #N`: the Nth ts block under that
 * heading) and `// <<< README.md` in a host's app module, and the README block it names.
 */
function snippetRegion(root, file) {
  const source = fs.readFileSync(file, 'utf8').replace(/\r\n/g, '\n').split('\n');
  const begin = source.findIndex((l) => /^\/\/ >>> README\.md "/.test(l));
  const end = source.findIndex((l) => /^\/\/ <<< README\.md\s*$/.test(l));
  if (begin < 0 || end < begin) {
    return { error: `${file}: no // >>> README.md "..." ... // <<< README.md markers` };
  }
  const [, heading, nth] = /^\/\/ >>> README\.md "(.+)"(?: #(\d+))?\s*$/.exec(source[begin]) ?? [];
  const blocks = readmeBlocks(fs.readFileSync(path.join(root, 'README.md'), 'utf8'), heading);
  const index = Number(nth ?? 1) - 1;
  if (!blocks) return { error: `README.md has no heading "${heading}" (named in ${file})` };
  if (!blocks[index]) return { error: `README.md's "${heading}" has no ts block #${index + 1}` };
  return {
    source,
    begin,
    end,
    name: `"${heading}" block #${index + 1}`,
    want: blocks[index].split('\n'),
  };
}

/** Checks a host's app module against the README block its markers name. */
function checkSnippet(root, fixtureDir) {
  const region = snippetRegion(root, path.join(fixtureDir, 'src', 'app.module.ts'));
  if (region.error) return { ok: false, detail: region.error };
  const { source, begin, end, name, want } = region;
  const have = source.slice(begin + 1, end);
  for (let i = 0; i < Math.max(want.length, have.length); i++) {
    if (want[i] !== have[i]) {
      return {
        ok: false,
        detail:
          `src/app.module.ts differs from README.md's ${name} at its line ${i + 1} ` +
          `(node scripts/test-hosts.js --write-snippets copies it):\n` +
          `  README: ${want[i] === undefined ? '(end of block)' : want[i]}\n` +
          `  host:   ${have[i] === undefined ? '(end of region)' : have[i]}`,
      };
    }
  }
  return { ok: true, detail: `matches README.md's ${name}` };
}

/** --write-snippets: pastes each README block into the NestJS hosts' marked regions. */
function writeSnippets(root) {
  let failed = false;
  for (const fixture of FIXTURES.filter((f) => f.kind === 'nest')) {
    const file = path.join(root, 'test', 'hosts', fixture.name, 'src', 'app.module.ts');
    const region = snippetRegion(root, file);
    if (region.error) {
      console.error(region.error);
      failed = true;
      continue;
    }
    const { source, begin, end, name, want } = region;
    const next = [...source.slice(0, begin + 1), ...want, ...source.slice(end)].join('\n');
    const changed = next !== source.join('\n');
    if (changed) fs.writeFileSync(file, next);
    console.log(`${path.relative(root, file)}: ${changed ? 'now' : 'already'} README.md's ${name}`);
  }
  process.exitCode = failed ? 1 : 0;
}

// ---------- test results ----------

/** A node:test reporter writing jest's JSON shape (the one vitest's json reporter also writes). */
const NODE_TEST_REPORTER = `
export default async function* jsonReporter(source) {
  const files = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { name, file = '', details } = event.data;
    if (details?.type === 'suite') continue;
    if (!files.has(file)) files.set(file, { name: file, assertionResults: [] });
    const error = details?.error;
    files.get(file).assertionResults.push({
      title: name,
      fullName: name,
      ancestorTitles: [],
      status: event.type === 'test:pass' ? 'passed' : 'failed',
      failureMessages: error ? [String(error.cause?.stack ?? error.cause ?? error.message ?? error)] : [],
    });
  }
  yield JSON.stringify({ testResults: [...files.values()] });
}
`;

/** How to get JSON results out of the fixture's test script. */
function testCommand(script, resultsFile, reporterFile) {
  const env = { ...process.env };
  let extra = [];
  if (/\bvitest\b/.test(script)) {
    extra = ['--', '--reporter=default', '--reporter=json', `--outputFile.json=${resultsFile}`];
  } else if (/\bjest\b/.test(script)) {
    extra = ['--', '--json', `--outputFile=${resultsFile}`];
  } else if (/\bnode\b.*--test\b/.test(script)) {
    env.NODE_OPTIONS = [
      process.env.NODE_OPTIONS ?? '',
      '--test-reporter=spec --test-reporter-destination=stdout',
      `--test-reporter=${reporterFile} --test-reporter-destination=${resultsFile}`,
    ]
      .join(' ')
      .trim();
  } else {
    return null;
  }
  return { extra, env };
}

/** Opens the message of a test that could not run because an earlier one failed. */
const NOT_RUN = 'not run:';

/**
 * Cells for the test steps and for each of `databases`, from the results file (jest's JSON
 * shape); a database's cell has the time its tests' files took.
 */
function cellsFromResults(resultsFile, steps, databases = []) {
  const cells = {};
  const byDatabase = {};
  const failures = [];
  let results;
  try {
    results = JSON.parse(fs.readFileSync(resultsFile, 'utf8'));
  } catch {
    for (const step of steps) cells[step] = { state: 'FAIL', note: 'no results' };
    for (const db of databases) byDatabase[db] = { state: 'FAIL', note: 'no results' };
    return {
      cells,
      databases: byDatabase,
      failures: ['the test runner wrote no results (see its output)'],
    };
  }
  const byStep = new Map(steps.map((s) => [s, []]));
  const byPlace = new Map(databases.map((db) => [db, { tests: [], start: Infinity, end: 0 }]));
  const failed = [];
  for (const file of results.testResults ?? []) {
    if (file.status === 'failed' && (file.assertionResults ?? []).length === 0) {
      const message = file.message ?? file.failureMessage ?? 'failed to run';
      failures.push(`${path.basename(file.name ?? '')} did not run: ${summary(message)}`);
    }
    for (const test of file.assertionResults ?? []) {
      const step = /^(\w+):/.exec(test.title)?.[1];
      const entry = {
        ...test,
        place: / on (\S+)$/.exec((test.ancestorTitles ?? []).at(-1) ?? '')?.[1],
        message: summary(test.failureMessages?.[0] ?? test.status),
      };
      if (byStep.has(step)) byStep.get(step).push(entry);
      if (entry.place) {
        if (!byPlace.has(entry.place))
          byPlace.set(entry.place, { tests: [], start: Infinity, end: 0 });
        const place = byPlace.get(entry.place);
        place.tests.push(entry);
        // Each database has a spec file of its own: its time is its files' time.
        if (file.startTime && file.endTime) {
          place.start = Math.min(place.start, file.startTime);
          place.end = Math.max(place.end, file.endTime);
        }
      }
      if (test.status === 'passed') continue;
      if (!byStep.has(step)) entry.message += ' (a test named for no step)';
      failed.push(entry);
    }
  }
  for (const [step, tests] of byStep) {
    const bad = tests.filter((t) => t.status !== 'passed');
    // Where it failed (the describe's "... on MariaDB", "on PostgreSQL", "on SQLite"), when it says.
    const places = [...new Set(bad.map((t) => t.place).filter(Boolean))].join('+');
    if (tests.length === 0) cells[step] = { state: 'FAIL', note: 'no test' };
    else if (bad.length === 0) cells[step] = { state: 'pass' };
    else if (bad.every((t) => notRun(t.message))) cells[step] = { state: 'skip', note: places };
    else cells[step] = { state: 'FAIL', note: places };
  }
  for (const [db, { tests, start, end }] of byPlace) {
    const bad = tests.filter((t) => t.status !== 'passed');
    const seconds = end > start ? (end - start) / 1000 : undefined;
    if (tests.length === 0) {
      byDatabase[db] = { state: 'FAIL', note: 'no test' };
      failures.push(`no test ran on ${db} (a describe "<fixture> on ${db}" in a spec of its own)`);
    } else if (bad.length === 0) byDatabase[db] = { state: 'pass', seconds };
    else {
      const state = bad.every((t) => notRun(t.message)) ? 'skip' : 'FAIL';
      byDatabase[db] = { state, note: `${bad.length} of ${tests.length}`, seconds };
    }
  }
  // One line per distinct message, naming the tests that gave it.
  const byMessage = new Map();
  for (const t of failed) {
    if (!byMessage.has(t.message)) byMessage.set(t.message, []);
    byMessage.get(t.message).push(t);
  }
  for (const [message, tests] of byMessage) {
    const where = [...new Set(tests.map((t) => t.place).filter(Boolean))].join('+');
    const steps = new Map();
    for (const t of tests) {
      const step = /^(\w+):/.exec(t.title)?.[1] ?? t.title;
      steps.set(step, (steps.get(step) ?? 0) + 1);
    }
    const list = [...steps].map(([step, n]) => (n > 1 ? `${step} x${n}` : step)).join(', ');
    const who =
      tests.length === 1
        ? (tests[0].fullName ?? tests[0].title)
        : `${tests.length} tests${where ? ` on ${where}` : ''} (${list})`;
    failures.push(`${who}\n      ${message}`);
  }
  return { cells, databases: byDatabase, failures };
}

function notRun(message) {
  return message.replace(/^\w*Error: /, '').startsWith(NOT_RUN);
}

/** A failure message without colours and stack frames: the assertion and its diff, shortened. */
function summary(text) {
  const lines = String(text ?? '')
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() && !/^\s*at /.test(l) && !/^\s*\d+ \|/.test(l) && !/^\s*[>|] /.test(l));
  const text2 = lines
    .slice(0, 24)
    .map((l) => l.trim())
    .join(' | ');
  return text2.length > 1500 ? `${text2.slice(0, 1500)} ...` : text2;
}

// ---------- the standalone service the client fixtures read ----------

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function startService(root, scratch, log) {
  const dir = path.join(scratch, 'service');
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const env = {
    ...process.env,
    DATABASE_URL: `sqlite:${path.join(dir, 'loyalty.sqlite')}`,
    PORT: String(port),
    HOST: '127.0.0.1',
    NODE_ENV: 'production',
  };
  const cli = path.join(root, 'dist', 'src', 'host', 'cli', 'main.js');
  const setup = await run(
    process.execPath,
    [cli, 'setup-demo', '--entries', String(DEMO_ENTRIES)],
    { cwd: dir, env, log },
  );
  if (setup.code !== 0)
    throw new Error(`setup-demo exited ${setup.code}:\n${tail(setup.output, 15)}`);
  const token = await run(process.execPath, [cli, 'token', 'create', '--name', 'client-fixtures'], {
    cwd: dir,
    env,
    log,
  });
  const value = token.output.match(/lpt_[0-9A-Za-z]{49}/)?.[0];
  if (token.code !== 0 || !value)
    throw new Error(`token create exited ${token.code}:\n${tail(token.output, 15)}`);
  const out = fs.openSync(log, 'a');
  const child = spawn(process.execPath, [path.join(root, 'dist', 'src', 'host', 'main.js')], {
    cwd: dir,
    env,
    stdio: ['ignore', out, out],
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`the service exited ${child.exitCode} (see ${log})`);
    try {
      if ((await fetch(`${base}/health/ready`)).ok) break;
    } catch {}
    if (Date.now() > deadline) {
      child.kill();
      throw new Error(`the service was not ready within 60 s (see ${log})`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    env: { LOYALTY_ENDPOINT: `${base}/query`, LOYALTY_TOKEN: value, LOYALTY_SPACE: '1' },
    stop: () =>
      new Promise((resolve) => {
        // Gone already (it exited, or a signal ended it): 'exit' will not come again.
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
}

// ---------- one fixture ----------

async function runFixture(fixture, ctx) {
  const { root, scratch, packs, verbose } = ctx;
  const started = Date.now();
  const dir = path.join(scratch, 'hosts', fixture.name);
  const log = path.join(scratch, 'logs', `${fixture.name}.log`);
  const cells = Object.fromEntries(STEPS.map((s) => [s, { state: '-' }]));
  const databases = Object.fromEntries(DATABASES[fixture.kind].map((db) => [db, { state: '-' }]));
  const notes = [];
  const failures = [];
  const say = (text) => console.log(`[${fixture.name}] ${text}`);
  const step = async (name, body) => {
    const t = Date.now();
    const result = await body();
    say(
      `${name}: ${result.state}${result.note ? ` (${result.note})` : ''} in ${Math.round((Date.now() - t) / 1000)} s`,
    );
    cells[name] = result;
    return result.state === 'pass';
  };
  copyFixture(path.join(root, 'test', 'hosts', fixture.name), dir);
  if (fixture.kind === 'nest')
    fs.copyFileSync(
      path.join(root, 'test', 'hosts', SHARED_SUITE),
      path.join(dir, 'test', SHARED_SUITE),
    );
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const options = { cwd: dir, log, verbose };

  const installed = await step('install', async () => {
    const own = await run('npm', ['install', '--no-audit', '--no-fund'], options);
    if (own.code !== 0) {
      failures.push(`npm install exited ${own.code}:\n${tail(own.output, 25)}`);
      return { state: 'FAIL', note: 'host npm install' };
    }
    const tarball = fixture.kind === 'nest' ? packs.server : packs.client;
    if (!tarball) {
      failures.push(
        `no ${fixture.kind === 'nest' ? SERVER_PACKAGE : CLIENT_PACKAGE} tarball: ${packs.missing[fixture.kind]}`,
      );
      return { state: 'FAIL', note: 'no tarball' };
    }
    const ours = await run('npm', ['install', '--no-audit', '--no-fund', tarball], options);
    const { ours: warnings, foreign } = ourPeerWarnings(own.output, ours.output, [
      SERVER_PACKAGE,
      CLIENT_PACKAGE,
    ]);
    for (const block of foreign)
      notes.push(
        `a peer warning of the host's own stack, not ours:\n    ${block.lines.slice(0, 4).join('\n    ')}`,
      );
    if (ours.code !== 0) {
      failures.push(
        `npm install ${path.basename(tarball)} exited ${ours.code}:\n${tail(ours.output, 30)}`,
      );
      return { state: 'FAIL', note: warnings.length ? 'ERESOLVE' : 'npm install tarball' };
    }
    if (warnings.length) {
      for (const block of warnings)
        failures.push(`npm printed a peer warning naming our package:\n${block.lines.join('\n')}`);
      return { state: 'FAIL', note: 'peer warning' };
    }
    return { state: 'pass' };
  });

  if (fixture.kind === 'nest') {
    await step('snippet', async () => {
      const result = checkSnippet(root, dir);
      if (!result.ok) failures.push(result.detail);
      return { state: result.ok ? 'pass' : 'FAIL' };
    });
  }

  if (!installed) {
    for (const s of ['compile', ...TEST_STEPS[fixture.kind]])
      if (cells[s].state === '-') cells[s] = { state: 'skip' };
    if (fixture.kind === 'client') cells.install = { state: 'FAIL', note: cells.install.note };
    for (const db of Object.keys(databases)) databases[db] = { state: 'skip' };
    return {
      fixture,
      cells,
      databases,
      notes,
      failures,
      seconds: (Date.now() - started) / 1000,
      log,
    };
  }

  if (manifest.scripts?.build) {
    await step('compile', async () => {
      const build = await run('npm', ['run', 'build'], options);
      if (build.code !== 0)
        failures.push(`npm run build exited ${build.code}:\n${tail(build.output, 30)}`);
      return { state: build.code === 0 ? 'pass' : 'FAIL' };
    });
  }

  const script = manifest.scripts?.['test:e2e'] ? 'test:e2e' : 'test';
  const resultsFile = path.join(scratch, 'logs', `${fixture.name}.results.json`);
  const how = testCommand(manifest.scripts?.[script] ?? '', resultsFile, ctx.reporter);
  const t = Date.now();
  if (!how) {
    failures.push(
      `cannot read results from "${manifest.scripts?.[script]}" (jest, vitest or node --test)`,
    );
    for (const s of TEST_STEPS[fixture.kind]) cells[s] = { state: 'FAIL', note: 'runner' };
    for (const db of Object.keys(databases)) databases[db] = { state: 'FAIL', note: 'runner' };
  } else {
    const env = { ...how.env, ...(fixture.kind === 'client' ? ctx.serviceEnv : {}) };
    const test = await run('npm', ['run', script, ...how.extra], { ...options, env });
    const parsed = cellsFromResults(resultsFile, TEST_STEPS[fixture.kind], DATABASES[fixture.kind]);
    failures.push(...parsed.failures);
    Object.assign(databases, parsed.databases);
    for (const [name, cell] of Object.entries(parsed.cells)) {
      // A client's install cell is npm's install and its test's install checks together.
      if (name === 'install' && cells.install.state !== 'pass') continue;
      cells[name] = cell;
    }
    const allPassed = Object.values(parsed.cells).every((c) => c.state === 'pass');
    if (test.code !== 0 && allPassed) {
      failures.push(
        `npm run ${script} exited ${test.code} although every test passed:\n${tail(test.output, 20)}`,
      );
      for (const s of TEST_STEPS[fixture.kind]) cells[s] = { state: 'FAIL', note: 'exit code' };
    }
    say(`test: exit ${test.code} in ${Math.round((Date.now() - t) / 1000)} s`);
    for (const [db, cell] of Object.entries(databases))
      say(`on ${db}: ${cell.state}${cell.note ? ` (${cell.note})` : ''}${timeOf(cell)}`);
  }
  return {
    fixture,
    cells,
    databases,
    notes,
    failures,
    seconds: (Date.now() - started) / 1000,
    log,
  };
}

function timeOf(cell) {
  return cell.seconds === undefined ? '' : ` in ${Math.round(cell.seconds)} s`;
}

// ---------- the whole run ----------

async function pack(cwd, destination, log) {
  const result = await run('npm', ['pack', '--json', '--pack-destination', destination], {
    cwd,
    log,
  });
  if (result.code !== 0)
    throw new Error(`npm pack in ${cwd} exited ${result.code}:\n${tail(result.output, 15)}`);
  const json = result.output.slice(result.output.indexOf('['));
  return path.join(destination, JSON.parse(json)[0].filename);
}

/** The table of fixture x step, then (when a fixture runs on databases) fixture x database. */
function printTables(results) {
  const cell = (c) => (c.note ? `${c.state} ${c.note}` : c.state);
  printTable(
    ['fixture', ...STEPS, 'time'],
    results.map((r) => [
      r.fixture.name,
      ...STEPS.map((s) => cell(r.cells[s])),
      `${Math.round(r.seconds)} s`,
    ]),
  );
  const databases = [...new Set(results.flatMap((r) => Object.keys(r.databases)))];
  const onDatabases = results.filter((r) => Object.keys(r.databases).length > 0);
  if (onDatabases.length === 0) return;
  // A database's time is its spec file's: vitest runs the files at once, jest one after another.
  console.log('');
  printTable(
    ['fixture', ...databases],
    onDatabases.map((r) => [
      r.fixture.name,
      ...databases.map((db) =>
        r.databases[db] ? `${cell(r.databases[db])}${timeOf(r.databases[db])}` : '-',
      ),
    ]),
  );
}

function printTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (row) => `| ${row.map((v, i) => v.padEnd(widths[i])).join(' | ')} |`;
  console.log(line(header));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const row of rows) console.log(line(row));
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const { root } = options;
  if (options.writeSnippets) return writeSnippets(root);
  // Failed until the summary says otherwise: a run that ends early (a promise no event will
  // settle, and nothing else left to wait for) must never pass for a green one.
  process.exitCode = 1;
  const started = Date.now();
  const fixtures = FIXTURES.filter(
    (f) => options.only.length === 0 || options.only.includes(f.name),
  );
  for (const required of ['dist/src/index.js', 'dist/src/host/cli/main.js']) {
    if (!fs.existsSync(path.join(root, required)))
      throw new Error(`${required} is missing: run npm run build in ${root} first`);
  }
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-hosts-'));
  fs.mkdirSync(path.join(scratch, 'logs'), { recursive: true });
  fs.mkdirSync(path.join(scratch, 'packs'), { recursive: true });
  const runLog = path.join(scratch, 'logs', 'runner.log');
  console.log(`[test-hosts] ${root} -> ${scratch}`);

  const problems = [];
  const packs = { missing: {} };
  packs.server = options.serverTarball ?? (await pack(root, path.join(scratch, 'packs'), runLog));
  const clientDir = path.join(root, 'packages', 'client');
  if (options.clientTarball) {
    packs.client = options.clientTarball;
  } else if (!fs.existsSync(path.join(clientDir, 'package.json'))) {
    packs.missing.client = 'packages/client does not exist';
  } else if (!fs.existsSync(path.join(clientDir, 'dist'))) {
    packs.missing.client = 'packages/client/dist is missing: run npm run build first';
  } else {
    packs.client = await pack(clientDir, path.join(scratch, 'packs'), runLog);
  }
  console.log(
    `[test-hosts] packed ${[packs.server, packs.client]
      .filter(Boolean)
      .map((p) => path.basename(p))
      .join(', ')}`,
  );

  const reporter = path.join(scratch, 'node-test-reporter.mjs');
  fs.writeFileSync(reporter, NODE_TEST_REPORTER);
  let service;
  let serviceEnv = {};
  if (fixtures.some((f) => f.kind === 'client')) {
    try {
      service = await startService(root, scratch, path.join(scratch, 'logs', 'service.log'));
      serviceEnv = service.env;
      console.log(`[test-hosts] the standalone service answers at ${service.env.LOYALTY_ENDPOINT}`);
    } catch (error) {
      problems.push(
        `the standalone service for the client fixtures did not start: ${error.message}`,
      );
      serviceEnv = {
        LOYALTY_ENDPOINT: 'http://127.0.0.1:9/query',
        LOYALTY_TOKEN: 'none',
        LOYALTY_SPACE: '1',
      };
    }
  }

  const ctx = { root, scratch, packs, reporter, serviceEnv, verbose: options.verbose };
  const results = new Array(fixtures.length);
  let next = 0;
  const worker = async () => {
    while (next < fixtures.length) {
      const index = next++;
      results[index] = await runFixture(fixtures[index], ctx);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(options.jobs, fixtures.length) }, worker));
  } finally {
    await service?.stop();
  }

  console.log('');
  for (const r of results) {
    for (const note of r.notes) console.log(`note [${r.fixture.name}] ${note}`);
    for (const failure of r.failures) console.log(`FAIL [${r.fixture.name}] ${failure}`);
    if (r.failures.length) console.log(`     [${r.fixture.name}] full log: ${r.log}`);
  }
  for (const problem of problems) console.log(`FAIL ${problem}`);
  console.log('');
  printTables(results);
  const failed = results.filter((r) =>
    [...Object.values(r.cells), ...Object.values(r.databases)].some(
      (c) => c.state !== 'pass' && c.state !== '-',
    ),
  );
  const seconds = Math.round((Date.now() - started) / 1000);
  if (!options.keep && failed.length === 0 && problems.length === 0)
    fs.rmSync(scratch, { recursive: true, force: true });
  else console.log(`\nscratch kept: ${scratch}`);
  console.log(`\n${Math.floor(seconds / 60)} min ${seconds % 60} s in all`);
  // The closing line CI reads: fixtures passed and failed.
  console.log(`hosts: ${results.length - failed.length} passed, ${failed.length} failed`);
  process.exitCode = failed.length || problems.length ? 1 : 0;
}

if (require.main === module) {
  main().catch((error) => {
    console.error(`[test-hosts] ${error.stack ?? error}`);
    process.exitCode = 2;
  });
}

module.exports = { cellsFromResults, checkSnippet, ourPeerWarnings, readmeBlocks };
