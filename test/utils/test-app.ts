import type { LoggerService } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { AddressInfo } from 'node:net';
import type { Logger as TypeOrmLogger } from 'typeorm';
import { createApp, CreateAppOptions } from '../../src/host/app.factory';
import { AccessTokensService } from '../../src/auth/access-tokens.service';
import { loadConfig } from '../../src/host/config/app-config';
import { parseRecord } from '../../src/records/ingest-record';
import { IngestService } from '../../src/ingest/ingest.service';
import type { RecordOutcome } from '../../src/records/record-outcome';
import { createTestDatabase, DbKind, TestDatabase } from './test-databases';

export interface GqlError {
  message: string;
  path?: string[];
  extensions: Record<string, any>;
}

/**
 * The refusal of a token without `scope`, as the error envelope of docs/api.md carries it (a matcher:
 * request_id and timestamp vary). `more`: what GraphQL adds, path and locations.
 */
export const scopeRefusal = (
  scope: string,
  more: { path?: string[]; locations?: unknown } = {},
) => ({
  message: `Access token lacks the '${scope}' scope`,
  ...more,
  extensions: {
    code: 'INSUFFICIENT_SCOPE',
    category: 'AUTHENTICATION',
    http_status: 403,
    request_id: expect.any(String),
    timestamp: expect.any(String),
  },
});

/** `data` and `errors` may be absent at run time; specs assert that with toBeUndefined(). */
export interface GqlResponse<T = any> {
  status: number;
  headers: Headers;
  body: { data: T; errors: GqlError[] };
}

/**
 * Records every SQL statement the service runs, for specs that count queries. The change feed's
 * reads of board_changes (a timer's, not any request's) are kept apart, in `feedReads`.
 */
export class QueryRecorder implements TypeOrmLogger {
  readonly queries: string[] = [];
  readonly feedReads: string[] = [];
  /** Every statement with its parameters, as a log line would show them. */
  readonly logged: string[] = [];
  logQuery(query: string, parameters?: unknown[]): void {
    if (/^SELECT [^;]* FROM board_changes /.test(query)) {
      this.feedReads.push(query);
      return;
    }
    this.queries.push(query);
    this.logged.push(`${query} -- ${JSON.stringify(parameters ?? [])}`);
  }
  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}

/** Keeps everything the service logs, at every level, so a spec can search it. */
export class LogRecorder implements LoggerService {
  readonly lines: string[] = [];
  log(...args: unknown[]): void {
    this.lines.push(args.map(String).join(' '));
  }
  error(...args: unknown[]): void {
    this.log(...args);
  }
  warn(...args: unknown[]): void {
    this.log(...args);
  }
  debug(...args: unknown[]): void {
    this.log(...args);
  }
  verbose(...args: unknown[]): void {
    this.log(...args);
  }
}

export interface TestApp {
  app: NestFastifyApplication;
  db: TestDatabase;
  url: string;
  token: string;
  recorder: QueryRecorder;
  logs: LogRecorder;
  gql<T = any>(
    query: string,
    variables?: Record<string, unknown>,
    options?: { token?: string | null },
  ): Promise<GqlResponse<T>>;
  /** Loads records through the same path as `import`; throws if any is refused unexpectedly. */
  load(records: Array<Record<string, unknown>>): Promise<RecordOutcome[]>;
  close(): Promise<void>;
}

/** Starts the real service on a fresh database of `kind`, listening on a loopback port. */
export async function startTestApp(
  kind: DbKind,
  env: Record<string, string> = {},
  existing?: TestDatabase,
  options: Pick<CreateAppOptions, 'log'> = {},
): Promise<TestApp> {
  const db = existing ?? (await createTestDatabase(kind));
  const recorder = new QueryRecorder();
  // Rate limits are off unless a spec sets them: board walks send hundreds of requests.
  const config = loadConfig({
    DATABASE_URL: db.url,
    PORT: '0',
    RATE_LIMIT_TOKEN: 'off',
    RATE_LIMIT_ADDRESS: 'off',
    RATE_LIMIT_EXPORT: 'off',
    ...env,
  });
  const logs = new LogRecorder();
  const app = await createApp(config, { logger: logs, typeormLogger: recorder, ...options });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.getHttpServer().address() as AddressInfo;
  const url = `http://127.0.0.1:${port}/query`;
  const { token } = await app.get(AccessTokensService).create('e2e');
  const gql = async (
    query: string,
    variables?: Record<string, unknown>,
    options: { token?: string | null } = {},
  ) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const presented = options.token === undefined ? token : options.token;
    if (presented !== null) headers['access-token'] = presented;
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query, variables }),
    });
    return {
      status: response.status,
      headers: response.headers,
      body: (await response.json()) as GqlResponse['body'],
    };
  };
  const load = async (records: Array<Record<string, unknown>>) => {
    const parsed = records.map((record, i) => {
      const result = parseRecord(record);
      if (!result.ok) throw new Error(`fixture record ${i} invalid: ${result.reason}`);
      return result.record;
    });
    return app.get(IngestService).applyRecords(parsed);
  };
  return {
    app,
    db,
    url,
    token,
    recorder,
    logs,
    gql,
    load,
    close: async () => {
      await app.close();
      if (!existing) await db.drop();
    },
  };
}
