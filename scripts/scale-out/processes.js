// Child processes of scripts/scale-out.js: each one started here is tracked until it exits, and
// every one still running is killed when this process exits, however it exits (an uncaught error,
// a failed test, Ctrl-C), so a topology never leaves a server behind.
/* eslint-disable */
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');

const live = new Set();
const scratchDirs = new Set();

process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
  for (const dir of scratchDirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Removes `dir` when this process exits, unless removed (or kept) before. */
function removeOnExit(dir) {
  scratchDirs.add(dir);
  return () => scratchDirs.delete(dir);
}

/**
 * Starts `command` with its output appended to `logFile`; the handle's `exited` resolves with
 * { code, signal } once it has exited.
 */
function start(command, args, { env, logFile, cwd }) {
  const out = fs.openSync(logFile, 'a');
  const child = spawn(command, args, { env, cwd, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  live.add(child);
  const exited = new Promise((resolve) => {
    child.on('error', (error) => {
      fs.appendFileSync(logFile, `\n[scale-out] ${error.message}\n`);
      live.delete(child);
      resolve({ code: null, signal: null, error });
    });
    child.on('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
  return { child, exited, logFile, running: () => live.has(child) };
}

/** Sends `signal`, then SIGKILL after `graceMs`; resolves once the process has exited. */
async function stopProcess(handle, signal = 'SIGTERM', graceMs = 15_000) {
  if (!handle || !handle.running()) return handle?.exited;
  handle.child.kill(signal);
  const timer = setTimeout(() => handle.child.kill('SIGKILL'), graceMs);
  const result = await handle.exited;
  clearTimeout(timer);
  return result;
}

/** Runs a command to completion: { code, stdout, stderr }. */
function run(command, args, { env, input, cwd } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    live.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', (error) => {
      live.delete(child);
      reject(error);
    });
    child.on('close', (code) => {
      live.delete(child);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input ?? '');
  });
}

/** A TCP port nobody listens on now (the kernel's pick), on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Polls `check` (async, truthy = done) every `everyMs` until `timeoutMs`; throws `what` then. */
async function waitFor(check, { timeoutMs, everyMs = 100, what }) {
  const until = Date.now() + timeoutMs;
  let last;
  while (Date.now() < until) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  throw new Error(`${what} within ${timeoutMs / 1000} s${last ? ` (last: ${last.message})` : ''}`);
}

/** The last `lines` lines of a log file, for an error message. */
function tailOf(logFile, lines = 30) {
  try {
    return fs.readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** An executable by name: on PATH, or in the sbin folders Debian puts servers in. */
function findExecutable(name) {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

module.exports = {
  findExecutable,
  freePort,
  removeOnExit,
  run,
  start,
  stopProcess,
  tailOf,
  waitFor,
};
