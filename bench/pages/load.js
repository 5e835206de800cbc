// The load generator of bench/pages.js, run as its own process (child_process.fork) so that it
// never shares an event loop with the server it measures. IPC as bench/pages/server.js:
//   { id, cmd: 'run', target: {host, port, path, headers}, variables, vary, expect?, connections,
//     durationMs } -> { id, ok, result: { latencies, errors, firstError, wallMs, cpuMs } }
//   { id, cmd: 'close' }
// A run is a closed loop: `connections` keep-alive sockets (one http.Agent with maxSockets =
// connections, kept across runs so the sockets stay open), each sending its next request as soon
// as the previous answer is read, until `durationMs` has passed; the requests started by then are
// all waited for and counted, and wallMs runs until the last one is answered. Throughput =
// answers / wallMs is then right even when one answer takes longer than the run (the server is
// busy until the end). `expect` is a substring every good answer must contain.
/* eslint-disable */
const { serveParent } = require('./child');
const http = require('node:http');
const { performance } = require('node:perf_hooks');
const { pageBodies, post } = require('./http');

let agent;
let runs = 0;

async function run(job) {
  agent ??= new http.Agent({ keepAlive: true, maxSockets: job.connections });
  const bodyOf = pageBodies(job.variables, job.vary, `${process.pid}.${runs++}.${Date.now()}`);
  const latencies = [];
  let errors = 0;
  let firstError = null;
  let n = 0;
  const check = (answer) => {
    if (answer.status !== 200) return `HTTP ${answer.status}: ${answer.body.slice(0, 300)}`;
    if (answer.body.includes('"errors"')) return answer.body.slice(0, 300);
    if (job.expect && !answer.body.includes(job.expect))
      return `missing ${job.expect}: ${answer.body.slice(0, 300)}`;
    return null;
  };
  const cpuStart = process.cpuUsage();
  const started = performance.now();
  const stopAt = started + job.durationMs;

  async function connection() {
    while (performance.now() < stopAt) {
      let problem;
      let ms = 0;
      try {
        const answer = await post(agent, job.target, bodyOf(n++));
        ms = answer.ms;
        problem = check(answer);
      } catch (error) {
        problem = String(error);
      }
      if (problem === null) latencies.push(ms);
      else {
        errors++;
        firstError = firstError ?? problem;
      }
    }
  }

  await Promise.all(Array.from({ length: job.connections }, connection));
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuStart);
  return { latencies, errors, firstError, wallMs, cpuMs: (cpu.user + cpu.system) / 1000 };
}

const handlers = {
  run,
  async close() {
    agent?.destroy();
    setImmediate(() => process.exit(0));
    return null;
  },
};

serveParent(handlers);
