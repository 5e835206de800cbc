/**
 * The OTEL_* variables this service reads itself, validated at start like the rest of its
 * configuration. The SDK and the exporter read the others (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT,
 * _COMPRESSION, OTEL_BSP_*, OTEL_RESOURCE_ATTRIBUTES, span limits) on their own.
 */
export interface TracingOptions {
  protocol: 'http/protobuf' | 'http/json';
  sampler: SamplerChoice;
}

export type SamplerChoice =
  | { kind: 'always_on' | 'always_off' | 'parentbased_always_on' | 'parentbased_always_off' }
  | { kind: 'traceidratio' | 'parentbased_traceidratio'; ratio: number };

export const DEFAULT_SERVICE_NAME = 'loyalty-leaderboard';

/** Tracing is on when an OTLP endpoint is set, unless the standard OTEL_SDK_DISABLED says off. */
export function tracingWanted(env: NodeJS.ProcessEnv): boolean {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return Boolean(endpoint) && env.OTEL_SDK_DISABLED?.trim().toLowerCase() !== 'true';
}

/** Reads the options, or throws the problems, worded as the service's other settings are. */
export function readTracingOptions(env: NodeJS.ProcessEnv): TracingOptions {
  const problems: string[] = [];
  const protocolVariable = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = (env[protocolVariable] || 'http/protobuf').trim();
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    problems.push(
      `${protocolVariable} must be http/protobuf or http/json (got "${protocol}"; grpc is not built in: a collector takes either on its port 4318)`,
    );
  }
  const kind = (env.OTEL_TRACES_SAMPLER || 'parentbased_always_on').trim().toLowerCase();
  let sampler: SamplerChoice = { kind: 'parentbased_always_on' };
  switch (kind) {
    case 'always_on':
    case 'always_off':
    case 'parentbased_always_on':
    case 'parentbased_always_off':
      sampler = { kind };
      break;
    case 'traceidratio':
    case 'parentbased_traceidratio': {
      const raw = env.OTEL_TRACES_SAMPLER_ARG;
      const ratio = raw === undefined || raw.trim() === '' ? 1 : Number(raw);
      if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
        problems.push(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 (got "${raw}")`);
      }
      sampler = { kind, ratio };
      break;
    }
    default:
      problems.push(
        `OTEL_TRACES_SAMPLER must be always_on, always_off, traceidratio or their parentbased_ forms (got "${env.OTEL_TRACES_SAMPLER}")`,
      );
  }
  if (problems.length > 0) throw new TracingConfigError(problems);
  return { protocol: protocol as TracingOptions['protocol'], sampler };
}

export class TracingConfigError extends Error {
  constructor(readonly problems: string[]) {
    // The wording of the service's ConfigError, which is not imported: this loads before anything.
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'TracingConfigError';
  }
}
