import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { maskQuoted } from './span-text';

/**
 * The mysql2 instrumentation puts the server's error message in a failed statement's status, and
 * MySQL quotes values in some ("Duplicate entry '0xab...-7' for key 'PRIMARY'"): masked here, as
 * the span ends and before any exporter sees it.
 */
export class StatementErrorsProcessor implements SpanProcessor {
  onEnding(span: Span): void {
    const { code, message } = span.status;
    if (code !== SpanStatusCode.ERROR || message === undefined) return;
    if (span.attributes['db.system.name'] !== 'mysql') return;
    span.setStatus({ code, message: maskQuoted(message) });
  }

  onStart(): void {}

  onEnd(_span: ReadableSpan): void {}

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
