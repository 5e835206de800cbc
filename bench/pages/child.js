/* eslint-disable */
// The child side of bench/pages.js's IPC: answers { id, cmd, ...args } messages with the named
// handler's result, and exits when the parent goes away (rather than keep a port and a core).
// Every child also answers cpu (process.cpuUsage()) and profileStart and profileStop (V8's CPU
// profiler, for --profile).
function serveParent(handlers) {
  const all = { ...profilerHandlers(), ...handlers };
  process.on('disconnect', () => process.exit(1));
  process.on('message', ({ id, cmd, ...args }) => {
    all[cmd](args).then(
      (result) => process.send({ id, ok: true, result }),
      (error) => process.send({ id, ok: false, error: String(error?.stack ?? error) }),
    );
  });
}

/** profileStart(), then profileStop({ file }) writes a .cpuprofile (Chrome DevTools' format). */
function profilerHandlers() {
  let session;
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  return {
    async cpu() {
      return process.cpuUsage();
    },
    async profileStart() {
      session = new (require('node:inspector').Session)();
      session.connect();
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 250 }); // microseconds
      await post('Profiler.start');
      return null;
    },
    async profileStop({ file }) {
      const { profile } = await post('Profiler.stop');
      session.disconnect();
      require('node:fs').writeFileSync(file, JSON.stringify(profile));
      return null;
    },
  };
}

/**
 * The parent side: forks `file` (a script that calls serveParent) with NODE_ENV=production, as
 * deployed (graphql-js then skips its development-only checks), and answers { proc, call, close }:
 * call(cmd, args) resolves with the handler's result; close() asks the child to close and waits
 * for its exit. The child is added to `live` (killed by the caller on exit) until it exits.
 */
function forkChild(file, { execArgv = [], live = new Set() } = {}) {
  const { fork } = require('node:child_process');
  const name = require('node:path').basename(file);
  const proc = fork(file, [], {
    execArgv,
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  live.add(proc);
  proc.on('error', () => {}); // a send after it died: the pending call fails at its exit
  const pending = new Map();
  let nextId = 0;
  const exited = new Promise((resolve) =>
    proc.on('exit', (code) => {
      live.delete(proc);
      for (const p of pending.values()) p.reject(new Error(`${name} exited (${code})`));
      pending.clear();
      resolve();
    }),
  );
  proc.on('message', ({ id, ok, result, error }) => {
    const p = pending.get(id);
    pending.delete(id);
    if (ok) p?.resolve(result);
    else p?.reject(new Error(error));
  });
  const call = (cmd, args = {}) =>
    new Promise((resolve, reject) => {
      if (!proc.connected) return reject(new Error(`${name} is gone`));
      const id = nextId++;
      pending.set(id, { resolve, reject });
      proc.send({ id, cmd, ...args });
    });
  const close = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    await call('close').catch(() => proc.kill());
    await exited;
  };
  return { proc, call, close };
}

module.exports = { serveParent, forkChild };
