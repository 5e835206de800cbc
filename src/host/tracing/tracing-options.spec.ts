import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { AlwaysOnSampler, SamplingDecision } from '@opentelemetry/sdk-trace-node';
import { RequestsOnlySampler, samplerOf } from './requests-only.sampler';
import { readTracingOptions, tracingWanted } from './tracing-options';

describe('tracing settings', () => {
  it('is on with an OTLP endpoint, unless OTEL_SDK_DISABLED', () => {
    expect(tracingWanted({})).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBe(false);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toBe(
      true,
    );
    expect(
      tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' }),
    ).toBe(false);
  });

  it('sends protobuf unless told json, the traces variable first', () => {
    expect(readTracingOptions({}).protocol).toBe('http/protobuf');
    expect(readTracingOptions({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).protocol).toBe(
      'http/json',
    );
    expect(
      readTracingOptions({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      }).protocol,
    ).toBe('http/json');
  });

  it('reads the standard sampler variables', () => {
    expect(readTracingOptions({}).sampler).toEqual({ kind: 'parentbased_always_on' });
    expect(
      readTracingOptions({
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
      }).sampler,
    ).toEqual({ kind: 'parentbased_traceidratio', ratio: 0.25 });
    expect(readTracingOptions({ OTEL_TRACES_SAMPLER: 'traceidratio' }).sampler).toEqual({
      kind: 'traceidratio',
      ratio: 1,
    });
  });

  it('names every bad setting at once', () => {
    expect(() =>
      readTracingOptions({
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_TRACES_SAMPLER: 'traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '2',
      }),
    ).toThrow(
      'Invalid configuration:\n  - OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (got "grpc"; grpc is not built in: a collector takes either on its port 4318)\n  - OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 (got "2")',
    );
    expect(() => readTracingOptions({ OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(
      /OTEL_TRACES_SAMPLER must be/,
    );
  });
});

describe('a trace begins with a request', () => {
  const sampler = new RequestsOnlySampler(new AlwaysOnSampler());
  const decide = (kind: SpanKind, context = ROOT_CONTEXT) =>
    sampler.shouldSample(context, '0af7651916cd43dd8448eb211c80319c', 'x', kind, {}, []).decision;
  const withParent = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: TraceFlags.SAMPLED,
  });

  it('drops a statement with no request around it', () => {
    expect(decide(SpanKind.CLIENT)).toBe(SamplingDecision.NOT_RECORD);
    expect(decide(SpanKind.INTERNAL)).toBe(SamplingDecision.NOT_RECORD);
  });

  it('leaves requests and what runs within them to the configured sampler', () => {
    expect(decide(SpanKind.SERVER)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide(SpanKind.CLIENT, withParent)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    const never = new RequestsOnlySampler(samplerOf({ kind: 'always_off' }));
    expect(
      never.shouldSample(
        ROOT_CONTEXT,
        '0af7651916cd43dd8448eb211c80319c',
        'x',
        SpanKind.SERVER,
        {},
        [],
      ).decision,
    ).toBe(SamplingDecision.NOT_RECORD);
  });
});
