import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import Database from 'better-sqlite3';
import { BetterSqlite3Instrumentation } from './better-sqlite3.instrumentation';

describe('better-sqlite3 statements as spans', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const instrumentation = new BetterSqlite3Instrumentation({ enabled: false });
  const tracer = provider.getTracer('spec');
  let db: Database.Database;

  beforeAll(() => {
    provider.register();
    instrumentation.setTracerProvider(provider);
    // Jest loads modules itself, past the require hook: the export is patched by hand.
    instrumentation.patch(Database);
    db = new Database(':memory:');
    db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  });
  afterAll(async () => {
    db.close();
    instrumentation.unpatch(Database);
    await provider.shutdown();
    trace.disable();
    context.disable();
  });
  beforeEach(() => exporter.reset());

  /** Runs `work` in a request's span and returns the spans it made, the request's last. */
  function inRequest(work: () => void) {
    tracer.startActiveSpan('request', (span) => {
      work();
      span.end();
    });
    const spans = exporter.getFinishedSpans();
    const request = spans.at(-1)!;
    expect(request.name).toBe('request');
    return { request, statements: spans.slice(0, -1) };
  }

  it('makes a child span of every statement, with its text and never its values', () => {
    const { request, statements } = inRequest(() => {
      db.prepare('INSERT INTO notes (id, body) VALUES (?, ?)').run(1, 'secret-one');
      db.prepare('SELECT body FROM notes WHERE id = ?').get(1);
      db.prepare('SELECT body FROM notes WHERE body = ?').all('secret-one');
      for (const row of db.prepare('SELECT id FROM notes WHERE body <> ?').iterate('x')) void row;
      db.exec('DELETE FROM notes');
    });
    expect(statements.map((s) => [s.name, s.attributes['db.query.text']])).toEqual([
      ['INSERT', 'INSERT INTO notes (id, body) VALUES (?, ?)'],
      ['SELECT', 'SELECT body FROM notes WHERE id = ?'],
      ['SELECT', 'SELECT body FROM notes WHERE body = ?'],
      ['SELECT', 'SELECT id FROM notes WHERE body <> ?'],
      ['DELETE', 'DELETE FROM notes'],
    ]);
    for (const span of statements) {
      expect(span.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(request.spanContext().traceId);
      expect(span.attributes['db.system.name']).toBe('sqlite');
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
      expect(JSON.stringify(span.attributes)).not.toContain('secret-one');
    }
  });

  it('records a failed statement as an error', () => {
    db.prepare('INSERT INTO notes (id, body) VALUES (?, ?)').run(7, 'first');
    const { statements } = inRequest(() => {
      expect(() =>
        db.prepare('INSERT INTO notes (id, body) VALUES (?, ?)').run(7, 'secret-two'),
      ).toThrow(/UNIQUE constraint failed/);
      expect(() => db.exec('SELECT id FROM nowhere')).toThrow(/no such table/);
    });
    expect(statements).toHaveLength(2);
    const [insert, select] = statements;
    expect(insert.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'UNIQUE constraint failed: notes.id',
    });
    expect(insert.attributes['error.type']).toBe('SQLITE_CONSTRAINT_PRIMARYKEY');
    expect(insert.events.map((e) => e.name)).toEqual(['exception']);
    expect(JSON.stringify([insert.attributes, insert.events])).not.toContain('secret-two');
    expect(select.attributes['error.type']).toBe('SQLITE_ERROR');
    db.exec('DELETE FROM notes');
  });

  it('ends an iteration span when the rows are read or given up', () => {
    db.exec("INSERT INTO notes (id, body) VALUES (1, 'a'), (2, 'b'), (3, 'c')");
    let ended: boolean | undefined;
    const { statements } = inRequest(() => {
      for (const row of db.prepare('SELECT id FROM notes').iterate()) {
        ended = exporter.getFinishedSpans().length > 0;
        if ((row as { id: number }).id === 2) break;
      }
    });
    expect(ended).toBe(false);
    expect(statements.map((s) => s.name)).toEqual(['SELECT']);
    db.exec('DELETE FROM notes');
  });

  it('sees the statements of transactions and pragmas', () => {
    const { statements } = inRequest(() => {
      db.transaction(() => db.prepare('INSERT INTO notes (id, body) VALUES (?, ?)').run(9, 'x'))();
      db.pragma('user_version', { simple: true });
    });
    expect(statements.map((s) => s.name)).toEqual(['BEGIN', 'INSERT', 'COMMIT', 'PRAGMA']);
    db.exec('DELETE FROM notes');
  });

  it('makes no span outside a request', () => {
    db.prepare('SELECT 1').get();
    db.exec('SELECT 1');
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('stops when unpatched', () => {
    instrumentation.unpatch(Database);
    try {
      const { statements } = inRequest(() => db.prepare('SELECT 1').get());
      expect(statements).toEqual([]);
    } finally {
      instrumentation.patch(Database);
    }
    exporter.reset();
    const { statements } = inRequest(() => db.prepare('SELECT 2').get());
    expect(statements.map((s) => s.attributes['db.query.text'])).toEqual(['SELECT 2']);
  });
});
