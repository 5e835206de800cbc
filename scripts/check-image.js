#!/usr/bin/env node
// Proves the Dockerfile builds and its image runs, without a Docker engine: every stage is rebuilt
// in a scratch directory from exactly the files its COPY lines name (after .dockerignore), its RUN
// lines run there with the Node major its FROM names, and the final stage is started with the
// image's ENV and CMD until its HEALTHCHECK passes. Then it checks what the image must be:
// production packages only, a non-root user, a health check on /health/ready, and reports the size
// of what the image adds to its base. `node scripts/check-image.js [--keep]`.
//
// The RUN lines must use paths relative to WORKDIR: they run in the scratch copy of the stage, not
// in a container, so an absolute path would reach this machine's own file system.
/* eslint-disable */
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { nodeFor } = require('./node-versions');

const root = path.join(__dirname, '..');
const keep = process.argv.includes('--keep');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'loyalty-image-'));
const log = (line) => process.stderr.write(`[image] ${line}\n`);
const fail = (message) => {
  throw new Error(message);
};

/** The Dockerfile as instructions: continuation lines joined, comments dropped. */
function instructions(text) {
  const lines = [];
  let current = '';
  for (const raw of text.split('\n')) {
    if (!current && /^\s*#/.test(raw)) continue;
    const line = raw.replace(/\s+$/, '');
    if (line.endsWith('\\')) {
      current += line.slice(0, -1) + ' ';
      continue;
    }
    current += line;
    if (current.trim()) {
      const [, keyword, rest] =
        /^\s*(\w+)\s+([\s\S]*)$/.exec(current) ?? fail(`cannot read: ${current}`);
      lines.push({ keyword: keyword.toUpperCase(), rest: rest.trim() });
    }
    current = '';
  }
  return lines;
}

/** .dockerignore's patterns, as the simple forms this repository uses: `**\/name` and top-level paths. */
function ignoreRules() {
  const file = path.join(root, '.dockerignore');
  if (!fs.existsSync(file)) return () => false;
  const patterns = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  return (relative) => {
    const parts = relative.split(path.sep);
    return patterns.some((pattern) =>
      pattern.startsWith('**/')
        ? parts.includes(pattern.slice(3))
        : relative === pattern || relative.startsWith(`${pattern}${path.sep}`),
    );
  };
}

/** Copies `from` to `to` as COPY does (a directory's contents, not the directory itself). */
function copy(from, to, ignored, contextRoot) {
  const stat = fs.statSync(from, { throwIfNoEntry: false }) ?? fail(`COPY source missing: ${from}`);
  if (stat.isDirectory()) {
    fs.mkdirSync(to, { recursive: true });
    for (const entry of fs.readdirSync(from)) {
      const source = path.join(from, entry);
      if (contextRoot && ignored(path.relative(contextRoot, source))) continue;
      copy(source, path.join(to, entry), ignored, contextRoot);
    }
  } else if (stat.isSymbolicLink?.() || fs.lstatSync(from).isSymbolicLink()) {
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.symlinkSync(fs.readlinkSync(from), to);
  } else {
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
  }
}

/** `ENV a=b c=d` (the only form used here). */
function envPairs(rest) {
  const pairs = {};
  for (const match of rest.matchAll(/(\w+)=("[^"]*"|\S+)/g))
    pairs[match[1]] = match[2].replace(/^"|"$/g, '');
  return pairs;
}

function jsonArray(rest, what) {
  try {
    const value = JSON.parse(rest);
    if (Array.isArray(value)) return value;
  } catch {}
  return fail(`${what} must be in exec form (a JSON array): ${rest}`);
}

/** Every package directory under `modules`, nested ones included. */
function packageDirs(modules) {
  const dirs = [];
  if (!fs.existsSync(modules)) return dirs;
  for (const entry of fs.readdirSync(modules)) {
    if (entry.startsWith('.')) continue;
    const names = entry.startsWith('@')
      ? fs.readdirSync(path.join(modules, entry)).map((name) => `${entry}/${name}`)
      : [entry];
    for (const name of names) {
      const dir = path.join(modules, name);
      dirs.push(dir, ...packageDirs(path.join(dir, 'node_modules')));
    }
  }
  return dirs;
}

/** The packages under `modules` that no chain of dependencies (peers included) from `roots` reaches. */
function unreachable(modules, roots) {
  const top = path.dirname(modules);
  const resolve = (from, name) => {
    for (let dir = from; dir.startsWith(top); dir = path.dirname(dir)) {
      const candidate = path.join(dir, 'node_modules', name);
      if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
      if (dir === top) break;
    }
    return undefined;
  };
  const reached = new Set();
  const visit = (dir) => {
    if (!dir || reached.has(dir)) return;
    reached.add(dir);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const optionalPeers = manifest.peerDependenciesMeta ?? {};
    const names = [
      ...Object.keys(manifest.dependencies ?? {}),
      ...Object.keys(manifest.optionalDependencies ?? {}),
      ...Object.keys(manifest.peerDependencies ?? {}).filter(
        (name) => !optionalPeers[name]?.optional,
      ),
    ];
    for (const name of names) visit(resolve(dir, name));
  };
  for (const name of roots)
    visit(resolve(top, name) ?? fail(`${name} is not installed in the image`));
  return packageDirs(modules)
    .filter((dir) => !reached.has(dir))
    .map((dir) => path.relative(modules, dir));
}

const freePort = () =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

async function main() {
  const ignored = ignoreRules();
  const stages = [];
  let stage;
  for (const { keyword, rest } of instructions(
    fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8'),
  )) {
    if (keyword === 'FROM') {
      const [, image, name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest) ?? fail(`FROM: ${rest}`);
      const major =
        /^node:(\d+)/.exec(image)?.[1] ?? fail(`FROM ${image}: only node images are rebuilt here`);
      const dir = path.join(scratch, name ?? `stage-${stages.length}`);
      stage = {
        name: name ?? String(stages.length),
        image,
        dir,
        workdir: '/',
        env: {},
        node: nodeFor(Number(major)),
      };
      stages.push(stage);
      fs.mkdirSync(dir, { recursive: true });
      log(`stage ${stage.name}: ${image} (node ${major})`);
      continue;
    }
    const at = (target) =>
      path.join(
        stage.dir,
        path.posix.isAbsolute(target) ? target : path.posix.join(stage.workdir, target),
      );
    switch (keyword) {
      case 'WORKDIR':
        stage.workdir = path.posix.resolve(stage.workdir, rest);
        fs.mkdirSync(at('.'), { recursive: true });
        break;
      case 'ENV':
        Object.assign(stage.env, envPairs(rest));
        break;
      case 'COPY': {
        const words = rest.split(/\s+/);
        const flags = words.filter((word) => word.startsWith('--'));
        const [destination, ...sources] = words.filter((word) => !word.startsWith('--')).reverse();
        const fromStage = flags.find((flag) => flag.startsWith('--from='))?.slice(7);
        for (const source of sources.reverse()) {
          if (fromStage) {
            const origin =
              stages.find((candidate) => candidate.name === fromStage) ??
              fail(`COPY --from=${fromStage}: no such stage`);
            const from = path.join(origin.dir, source);
            const target = destination.endsWith('/')
              ? path.join(at(destination), path.basename(source))
              : at(destination);
            copy(
              from,
              fs.statSync(from, { throwIfNoEntry: false })?.isDirectory()
                ? at(destination)
                : target,
              () => false,
            );
          } else {
            const from = path.join(root, source);
            if (ignored(path.relative(root, from)))
              fail(`COPY ${source}: excluded by .dockerignore`);
            const isDirectory = fs.statSync(from, { throwIfNoEntry: false })?.isDirectory();
            const target =
              isDirectory || !destination.endsWith('/')
                ? at(destination)
                : path.join(at(destination), path.basename(source));
            copy(from, target, ignored, root);
          }
        }
        break;
      }
      case 'RUN': {
        log(`${stage.name}: RUN ${rest}`);
        const started = Date.now();
        execFileSync('sh', ['-c', rest], {
          cwd: at('.'),
          stdio: ['ignore', 'inherit', 'inherit'],
          env: { ...process.env, ...stage.env, ...stage.node.env },
        });
        log(`${stage.name}: done in ${((Date.now() - started) / 1000).toFixed(0)} s`);
        break;
      }
      case 'USER':
      case 'VOLUME':
      case 'EXPOSE':
        stage[keyword.toLowerCase()] = rest;
        break;
      case 'HEALTHCHECK':
        stage.healthcheck = jsonArray(rest.replace(/^(--\S+\s+)*CMD\s+/, ''), 'HEALTHCHECK');
        break;
      case 'CMD':
        stage.cmd = jsonArray(rest, 'CMD');
        break;
      default:
        fail(`${keyword}: not an instruction this check knows`);
    }
  }

  const image = stages.at(-1);
  // The image's paths, as seen from the scratch copy: /data is the stage's data directory.
  const inImage = (value) => value.replace(/(^|:)\/data\b/, `$1${path.join(image.dir, 'data')}`);
  if (!image.user || image.user === 'root' || image.user === '0')
    fail('the image must run as a non-root USER');
  if (!image.healthcheck || !image.healthcheck.join(' ').includes('/health/ready'))
    fail('the image needs a HEALTHCHECK on /health/ready');
  if (!image.cmd) fail('the image has no CMD');

  // Production packages only: every package in the image is one the service's dependencies reach.
  const service = JSON.parse(
    fs.readFileSync(path.join(root, 'packages/service/package.json'), 'utf8'),
  );
  const modules = path.join(image.dir, image.workdir, 'node_modules');
  const leaked = unreachable(modules, Object.keys(service.dependencies));
  if (leaked.length > 0)
    fail(`packages the service does not reach are in the image: ${leaked.join(', ')}`);
  for (const name of ['typescript', 'jest', 'eslint', 'playwright-core'])
    if (fs.existsSync(path.join(modules, name))) fail(`${name} is in the image`);

  // Start it as `docker run` would, and wait for the health check.
  const port = await freePort();
  // This machine's NODE_* settings (NODE_PATH, NODE_OPTIONS) are not the image's.
  const machineEnv = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('NODE_')),
  );
  const env = {
    ...machineEnv,
    ...image.env,
    ...image.node.env,
    PORT: String(port),
    HOST: '127.0.0.1',
  };
  for (const key of Object.keys(image.env)) env[key] = inImage(env[key]);
  const [command, ...args] = image.cmd;
  const binary = command === 'node' ? image.node.bin : command;
  const server = spawn(binary, args, {
    cwd: path.join(image.dir, image.workdir),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  server.stdout.on('data', (chunk) => (output += chunk));
  server.stderr.on('data', (chunk) => (output += chunk));
  const [checkCommand, ...checkArgs] = image.healthcheck;
  const healthy = () => {
    try {
      execFileSync(checkCommand === 'node' ? image.node.bin : checkCommand, checkArgs, {
        env,
        stdio: 'ignore',
        timeout: 5000,
      });
      return true;
    } catch {
      return false;
    }
  };
  try {
    const deadline = Date.now() + 60_000;
    while (!healthy()) {
      if (server.exitCode !== null || Date.now() > deadline)
        fail(`the image's CMD did not become healthy:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    log(`CMD ${image.cmd.join(' ')}: healthy on port ${port}`);
    const answer = await fetch(`http://127.0.0.1:${port}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    const body = await answer.json();
    if (answer.status !== 401 || body.errors?.[0]?.extensions?.code !== 'TOKEN_REQUIRED')
      fail(`POST /query without a token answered ${answer.status} ${JSON.stringify(body)}`);
    log('POST /query without a token: 401 TOKEN_REQUIRED, as documented');
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
  }
  // The server drivers load only when their URL is used: make sure the image has them.
  for (const driver of ['mysql2/promise', 'pg', '@opentelemetry/instrumentation-pg'])
    execFileSync(image.node.bin, ['-e', `require.resolve('${driver}')`], {
      cwd: path.join(image.dir, image.workdir),
      env,
    });
  const cli = execFileSync(image.node.bin, ['dist/src/host/cli/main.js', '--help'], {
    cwd: path.join(image.dir, image.workdir),
    env,
    encoding: 'utf8',
  });
  if (!cli.includes('Usage: loyalty')) fail(`the CLI in the image did not answer --help: ${cli}`);

  const bytes = (dir) =>
    Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
  const app = path.join(image.dir, image.workdir);
  const megabytes = (count) => `${(count / 1e6).toFixed(0)} MB`;
  log(
    `the image adds ${megabytes(bytes(app))} to ${image.image} ` +
      `(node_modules ${megabytes(bytes(modules))}, dist ${megabytes(bytes(path.join(app, 'dist')))}); ` +
      `user ${image.user}; ${fs.readdirSync(modules).filter((name) => !name.startsWith('.')).length} top-level packages`,
  );
}

main()
  .then(
    () => log('ok'),
    (error) => {
      log(`FAILED: ${error.message}`);
      process.exitCode = 1;
    },
  )
  .finally(() => {
    if (keep) log(`kept ${scratch}`);
    else fs.rmSync(scratch, { recursive: true, force: true });
  });
