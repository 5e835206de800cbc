import { Span, SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import {
  InstrumentationBase,
  InstrumentationConfig,
  InstrumentationNodeModuleDefinition,
} from '@opentelemetry/instrumentation';
import { statementText, statementVerb } from './span-text';

/** The statement methods that run SQL; `iterate` runs it as its rows are read. */
const STATEMENT_METHODS = ['run', 'get', 'all', 'iterate'] as const;
type StatementMethod = (typeof STATEMENT_METHODS)[number];

interface Statement {
  readonly source: string;
}
type Prototype = Record<string, unknown>;
type SqlMethod = (this: unknown, ...args: unknown[]) => unknown;

/**
 * A client span for every statement better-sqlite3 runs, which has no instrumentation of its own:
 * `db.system.name` sqlite, the statement's text as written (`db.query.text`: placeholders, never
 * the values bound to them) and, on failure, the error. Spans are made only within a recording
 * span (a request), so background statements cost one lookup and no span.
 *
 * better-sqlite3's statements are native objects: their prototype is found on the first
 * `Database#prepare` and patched once; `Database#exec` (SQL without statements) is patched on the
 * module's own prototype. Its `pragma` and `transaction` helpers run through statements, so they
 * are seen too.
 */
export class BetterSqlite3Instrumentation extends InstrumentationBase {
  private statementPrototype: Prototype | undefined;

  constructor(config: InstrumentationConfig = {}) {
    super('loyalty-leaderboard-better-sqlite3', '1.0.0', config);
  }

  protected init() {
    return new InstrumentationNodeModuleDefinition(
      'better-sqlite3',
      ['>=11 <14'],
      (exports: unknown) => this.patch(exports),
      (exports: unknown) => this.unpatch(exports),
    );
  }

  /** Patches better-sqlite3's Database (the module's export); public for the unit spec. */
  patch(Database: unknown): unknown {
    const prototype = (Database as { prototype: Prototype }).prototype;
    const onStatement = (statement: unknown) => {
      if (this.statementPrototype === undefined)
        this.patchStatements(Object.getPrototypeOf(statement) as Prototype);
    };
    const traced = this.traced.bind(this);
    this._wrap(prototype, 'prepare', (original) => {
      return function prepare(this: unknown, ...args: unknown[]) {
        const statement = (original as SqlMethod).apply(this, args);
        onStatement(statement);
        return statement;
      };
    });
    this._wrap(prototype, 'exec', (original) => {
      return function exec(this: unknown, sql: unknown) {
        return traced(String(sql), () => (original as SqlMethod).call(this, sql));
      };
    });
    return Database;
  }

  unpatch(Database: unknown): void {
    if (Database === undefined) return;
    const prototype = (Database as { prototype: Prototype }).prototype;
    this._unwrap(prototype, 'prepare');
    this._unwrap(prototype, 'exec');
    if (this.statementPrototype !== undefined) {
      for (const method of STATEMENT_METHODS) this._unwrap(this.statementPrototype, method);
      this.statementPrototype = undefined;
    }
  }

  private patchStatements(prototype: Prototype): void {
    this.statementPrototype = prototype;
    for (const method of STATEMENT_METHODS) {
      this._wrap(prototype, method, (original) =>
        this.statementMethod(method, original as SqlMethod),
      );
    }
  }

  private statementMethod(method: StatementMethod, original: SqlMethod): SqlMethod {
    if (method === 'iterate') {
      const startSpan = this.startSpan.bind(this);
      return function iterate(this: unknown, ...args: unknown[]) {
        const span = startSpan((this as Statement).source);
        if (span === undefined) return original.apply(this, args);
        try {
          return readRows(span, original.apply(this, args) as Iterable<unknown>);
        } catch (error) {
          failed(span, error);
          span.end();
          throw error;
        }
      };
    }
    const traced = this.traced.bind(this);
    return function (this: unknown, ...args: unknown[]) {
      return traced((this as Statement).source, () => original.apply(this, args));
    };
  }

  private traced<T>(sql: string, run: () => T): T {
    const span = this.startSpan(sql);
    if (span === undefined) return run();
    try {
      return run();
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  private startSpan(sql: string): Span | undefined {
    const active = context.active();
    if (!trace.getSpan(active)?.isRecording()) return undefined;
    return this.tracer.startSpan(
      statementVerb(sql),
      {
        kind: SpanKind.CLIENT,
        attributes: { 'db.system.name': 'sqlite', 'db.query.text': statementText(sql) },
      },
      active,
    );
  }
}

/** The rows of `iterate`, read through: the span ends when they are all read, or given up. */
function* readRows(span: Span, rows: Iterable<unknown>): Generator<unknown, void, undefined> {
  try {
    yield* rows;
  } catch (error) {
    failed(span, error);
    throw error;
  } finally {
    span.end();
  }
}

/** SQLite's messages name constraints and columns, not values ("UNIQUE constraint failed: t.c"). */
function failed(span: Span, error: unknown): void {
  const code = (error as { code?: unknown }).code;
  span.setAttribute('error.type', typeof code === 'string' ? code : (error as Error).name);
  span.recordException(error as Error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
}
