/**
 * OpenTelemetry tracing for the standalone service, on when OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. main.ts imports this first: the instrumentations
 * patch http, mysql2, better-sqlite3 and ioredis as they load, so they must be in place before
 * anything loads those. When tracing is off, nothing of OpenTelemetry is even loaded.
 *
 * On SIGTERM and SIGINT the spans still buffered are exported once the app has closed. Nest's
 * shutdown hooks close it, then raise the signal again with their own listener removed: when the
 * app closed every handle the event loop simply empties first, and 'beforeExit' flushes; when one
 * is left, the signal arrives, and our listener, the one left, flushes and lets it end the process.
 */
import type { Tracing } from './tracing-sdk';
import { tracingWanted } from './tracing-options';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

let tracing: Tracing | undefined;

if (tracingWanted(process.env)) {
  try {
    // Required, not imported: only when on, and at once, before main.ts's next import.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sdk = require('./tracing-sdk') as typeof import('./tracing-sdk');
    tracing = sdk.startTracing(process.env);
  } catch (error) {
    if ((error as Error).name !== 'TracingConfigError') throw error;
    // As main.ts reports every other invalid setting.
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  flushAtShutdown();
}

/** Exports the spans still buffered and stops tracing (nothing to do when tracing is off). */
export function shutdownTracing(): Promise<void> {
  return tracing?.shutdown() ?? Promise.resolve();
}

function flushAtShutdown(): void {
  const listeners = new Map<NodeJS.Signals, () => void>();
  let received: NodeJS.Signals | undefined;
  // Then the signal ends the process, as it would with tracing off (exit status 128 + signal).
  const flushThenEnd = (signal: NodeJS.Signals) => {
    for (const [name, listener] of listeners) process.removeListener(name, listener);
    void shutdownTracing().finally(() => process.kill(process.pid, signal));
  };
  for (const signal of SIGNALS) {
    listeners.set(signal, () => {
      received ??= signal;
      // Another listener (Nest closing the app) still runs: it raises the signal again when done.
      if (process.listenerCount(signal) === 1) flushThenEnd(signal);
    });
  }
  for (const [signal, listener] of listeners) process.on(signal, listener);
  process.once('beforeExit', () => {
    if (received !== undefined) flushThenEnd(received);
    // The export keeps the loop alive; once it is done the loop empties again and the process ends.
    else void shutdownTracing();
  });
}
