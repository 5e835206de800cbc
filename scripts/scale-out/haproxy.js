// Debian's haproxy for scripts/scale-out.js, run with deploy/haproxy.cfg itself: only what differs
// between compose's network and this machine is rewritten (the bind address, one server line per
// local instance, no Docker DNS), so the routing, health checks and retries tested here are the
// ones deployed.
/* eslint-disable */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const {
  findExecutable,
  freePort,
  run,
  start,
  stopProcess,
  tailOf,
  waitFor,
} = require('./processes');

const DEPLOYED_CONFIG = path.join(__dirname, '..', '..', 'deploy', 'haproxy.cfg');

function haproxyMissing() {
  return findExecutable('haproxy') ? [] : ['haproxy (Debian: apt-get install -y haproxy)'];
}

/**
 * deploy/haproxy.cfg for instances on 127.0.0.1 `ports`: `bind :8080` listens on 127.0.0.1:`port`;
 * each backend's `server appN appN:3000 ...` lines become one line per port, app1 to appK (with
 * `track app/appN` renumbered too); the Docker resolvers go.
 */
function localConfig(text, { port, ports }) {
  const out = [];
  let inResolvers = false;
  for (const line of text.split('\n')) {
    if (/^resolvers\s/.test(line)) {
      inResolvers = true;
      continue;
    }
    if (inResolvers) {
      if (/^\S/.test(line)) inResolvers = false;
      else continue;
    }
    const withoutDns = line.replace(/\s+resolvers docker\b/, '');
    if (/^\s*bind :8080\b/.test(withoutDns)) {
      out.push(withoutDns.replace('bind :8080', `bind 127.0.0.1:${port}`));
      continue;
    }
    const server = /^(\s*server )app(\d+) app\d+:3000(.*)$/.exec(withoutDns);
    if (!server) {
      out.push(withoutDns);
      continue;
    }
    if (server[2] !== '1') continue;
    ports.forEach((instancePort, i) => {
      const name = `app${i + 1}`;
      out.push(
        `${server[1]}${name} 127.0.0.1:${instancePort}${server[3].replace(/app1\b/g, name)}`,
      );
    });
  }
  if (!out.some((line) => line.includes(`bind 127.0.0.1:${port}`)))
    throw new Error(`${DEPLOYED_CONFIG} has no "bind :8080" line to rewrite`);
  return out.join('\n');
}

/** Starts haproxy in the foreground in front of `ports`; resolves once it answers. */
async function startHaproxy({ dir, ports, port, log }) {
  const missing = haproxyMissing();
  if (missing.length > 0) throw new Error(`scale-out needs ${missing.join(', ')}`);
  port ??= await freePort();
  const configFile = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(
    configFile,
    localConfig(fs.readFileSync(DEPLOYED_CONFIG, 'utf8'), { port, ports }),
  );
  const haproxy = findExecutable('haproxy');
  const checked = await run(haproxy, ['-c', '-q', '-f', configFile]);
  if (checked.code !== 0)
    throw new Error(`haproxy refused ${configFile}:\n${checked.stdout}${checked.stderr}`);
  const logFile = path.join(dir, 'haproxy.log');
  const balancer = {
    port,
    url: `http://127.0.0.1:${port}`,
    configFile,
    logFile,
    process: start(haproxy, ['-db', '-f', configFile], { env: process.env, logFile }),
  };
  await waitFor(
    async () => {
      if (!balancer.process.running()) throw new Error(`haproxy exited:\n${tailOf(logFile)}`);
      const response = await fetch(`${balancer.url}/haproxy/live`);
      return response.ok;
    },
    { timeoutMs: 15_000, what: 'haproxy did not answer' },
  );
  log(`haproxy on ${balancer.url} in front of ${ports.map((p) => `:${p}`).join(', ')}`);
  return balancer;
}

async function stopHaproxy(balancer) {
  await stopProcess(balancer?.process, 'SIGTERM', 5_000);
}

module.exports = { haproxyMissing, localConfig, startHaproxy, stopHaproxy };
