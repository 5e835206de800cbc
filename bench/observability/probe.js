// Preloaded (node -r) into each service process of bench/observability.js: on SIGWINCH it writes
// to BENCH_PROBE_FILE what the process has loaded and holds, to check that tracing and metrics
// that are off load nothing (OpenTelemetry packages, prom-client) and to compare memory. Idle
// until the signal: nothing on the request path. SIGWINCH because Nest's enableShutdownHooks()
// closes the app on SIGUSR2 (and the other usual signals); SIGWINCH is ignored by default.
/* eslint-disable */
const fs = require('node:fs');

const file = process.env.BENCH_PROBE_FILE;
if (file) {
  process.on('SIGWINCH', () => {
    const modules = Object.keys(require.cache);
    const count = (part) => modules.filter((m) => m.includes(part)).length;
    // @opentelemetry/api alone comes with prom-client (its exemplars), tracing on or off.
    const openTelemetryPackages = [
      ...new Set(
        modules
          .filter((m) => m.includes('/@opentelemetry/'))
          .map((m) => m.split('/@opentelemetry/').pop().split('/')[0]),
      ),
    ].sort();
    const memory = process.memoryUsage();
    fs.writeFileSync(
      file,
      JSON.stringify({
        modules: modules.length,
        openTelemetryModules: count('/@opentelemetry/'),
        openTelemetryPackages,
        promClientModules: count('/prom-client/'),
        rssBytes: memory.rss,
        heapUsedBytes: memory.heapUsed,
      }),
    );
  });
}
