import { SpanStatusCode } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { maskQuoted } from './span-text';
import { StatementErrorsProcessor } from './statement-errors.processor';

describe('failed MySQL and PostgreSQL statements', () => {
  it('masks what the message quotes', () => {
    expect(maskQuoted("Duplicate entry '0xab''c-7' for key 'PRIMARY'")).toBe(
      "Duplicate entry '?' for key '?'",
    );
    expect(maskQuoted("Incorrect integer value: 'a\\'b' for column `points` at row 1")).toBe(
      "Incorrect integer value: '?' for column `points` at row 1",
    );
    // PostgreSQL: the value at the end, not the names it quotes.
    expect(maskQuoted('invalid input syntax for type integer: "0xsecret"')).toBe(
      'invalid input syntax for type integer: "?"',
    );
    expect(maskQuoted('duplicate key value violates unique constraint "points_events_pkey"')).toBe(
      'duplicate key value violates unique constraint "points_events_pkey"',
    );
  });

  it('reach the exporter with the message masked, other spans as they were', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new NodeTracerProvider({
      spanProcessors: [new StatementErrorsProcessor(), new SimpleSpanProcessor(exporter)],
    });
    const tracer = provider.getTracer('spec');
    const failed = (system: string) => {
      const span = tracer.startSpan('INSERT', { attributes: { 'db.system.name': system } });
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: "Duplicate entry '0xsecret' for key 'PRIMARY'",
      });
      span.end();
    };
    failed('mysql');
    failed('postgresql');
    failed('sqlite');
    await provider.forceFlush();
    expect(exporter.getFinishedSpans().map((s) => s.status.message)).toEqual([
      "Duplicate entry '?' for key '?'",
      "Duplicate entry '?' for key '?'",
      "Duplicate entry '0xsecret' for key 'PRIMARY'",
    ]);
    await provider.shutdown();
  });
});
