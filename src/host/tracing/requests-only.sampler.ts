import { Attributes, Context, Link, SpanKind, trace } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  ParentBasedSampler,
  Sampler,
  SamplingDecision,
  SamplingResult,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import type { SamplerChoice } from './tracing-options';

/**
 * Traces begin with a request: a span with no parent is kept only when it is a server span. The
 * statements of background work (the change feed polls ten times a second, the SQLite backlog
 * folds, migrations at start) would otherwise each be a trace of one span, crowding out requests.
 * Everything else is the configured sampler's call.
 */
export class RequestsOnlySampler implements Sampler {
  constructor(private readonly inner: Sampler) {}

  shouldSample(
    context: Context,
    traceId: string,
    name: string,
    kind: SpanKind,
    attributes: Attributes,
    links: Link[],
  ): SamplingResult {
    if (kind !== SpanKind.SERVER && trace.getSpanContext(context) === undefined) {
      return { decision: SamplingDecision.NOT_RECORD };
    }
    return this.inner.shouldSample(context, traceId, name, kind, attributes, links);
  }

  toString(): string {
    return `RequestsOnly{${this.inner.toString()}}`;
  }
}

/** OTEL_TRACES_SAMPLER's sampler, as the SDK would build it had we not wrapped it. */
export function samplerOf(choice: SamplerChoice): Sampler {
  switch (choice.kind) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(choice.ratio);
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(choice.ratio) });
  }
}
