import { SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { maskQuoted } from './span-text';

/**
 * The mysql2 and pg instrumentations put the server's error message in a failed statement's
 * status, and the servers quote values in some (MySQL's "Duplicate entry '0xab...-7' for key
 * 'PRIMARY'", PostgreSQL's 'invalid input syntax for type integer: "x"'): masked here, as the span
 * ends and before any exporter sees it.
 */
export class StatementErrorsProcessor implements SpanProcessor {
  onEnding(span: Span): void {
    const { code, message } = span.status;
    if (code !== SpanStatusCode.ERROR || message === undefined) return;
    const system = span.attributes['db.system.name'];
    if (system !== 'mysql' && system !== 'postgresql') return;
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
