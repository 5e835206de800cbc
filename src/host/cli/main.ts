#!/usr/bin/env node
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { createReadStream, existsSync, statSync, writeFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { DataSource } from 'typeorm';
import { AccessTokensService } from '../../auth/access-tokens.service';
import { DEFAULT_TOKEN_SCOPES, parseTokenScopes, TokenScope } from '../../auth/token-scopes';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { AdminInputError, AdminsService } from '../dashboard/admins.service';
import { AppConfig, ConfigError, loadConfig } from '../config/app-config';
import { demoRecords } from '../../ingest/demo-dataset';
import { parseRecord } from '../../records/ingest-record';
import { IngestService, IngestSummary } from '../../ingest/ingest.service';
import {
  ingestStream,
  IngestStopped,
  NumberedRecord,
  readNdjson,
} from '../../ingest/record-stream';
import { BOARD_CSV_HEADER, boardCsvLine } from '../../common/csv';
import { BoardBacklogService } from '../../leaderboards/sqlite-backlog/board-backlog.service';
import { LeaderboardsService } from '../../leaderboards/graphql/leaderboards.service';
import { SpacesService } from '../../spaces/spaces.service';
import { describeSummary, ImportProgress } from './progress';
import { CliModule } from './cli.module';
import { printSchemaOf } from './schema-printer';

const HELP = `Usage: loyalty <command> [options]   (npm run cli -- <command> ...)

Commands:
  migrate                     apply pending database migrations
  admin create --email E      create a dashboard admin; the password is read from a prompt, or
                              from the first line of standard input (never from the command line)
  token create --name NAME [--scope query,ingest]
                              create an API access token with these scopes (comma-separated;
                              default query); prints the token alone on stdout
  import FILE [--batch-size N] apply NDJSON records (PRODUCT.md section 3), N per transaction
                              (default 200000; on MySQL/MariaDB a batch of points is two
                              transactions over separate address ranges); progress and
                              refused lines (with their line number) on stderr; exit 1 if any
                              was refused, or if a database error stopped it (it says at which
                              line, and what it applied). Safe to stop and re-run
  export --space ID [--sprint ID]
                              print a board as CSV in rank order: rank,address,username,points
  demo [--entries N]          load the demo dataset: 3 spaces with sprints, quests and N
                              addresses with points each (default 5000)
  setup-demo [--entries N]    migrate, load the demo dataset into an empty database, create a
                              token and print a ready-to-paste curl line
  schema [--out FILE]         print the GraphQL schema (SDL), or write it to FILE

Environment: DATABASE_URL (default sqlite:./data/loyalty.sqlite), see README.md.`;

/** Notes for people go to stderr, so stdout carries only what a script asked for. */
const note = (text: string) => process.stderr.write(`${text}\n`);

function option(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  if (index === -1) return undefined;
  const value = args[index + 1];
  if (value === undefined || value.startsWith('--')) throw new UsageError(`${name} needs a value`);
  return value;
}

function positiveInt(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new UsageError(`${name} must be a positive whole number`);
  return Number(value);
}

class UsageError extends Error {}

/** A hidden prompt on a terminal; otherwise the first line of standard input. */
async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) {
    let input = '';
    for await (const chunk of process.stdin) input += String(chunk);
    return input.split(/\r?\n/)[0];
  }
  process.stderr.write('Password (at least 12 characters): ');
  return new Promise((resolve) => {
    let password = '';
    process.stdin.setRawMode(true);
    process.stdin.resume();
    process.stdin.setEncoding('utf8');
    const onData = (key: string) => {
      if (key === '\r' || key === '\n' || key === '\u0004') {
        process.stdin.setRawMode(false);
        process.stdin.pause();
        process.stdin.off('data', onData);
        process.stderr.write('\n');
        resolve(password);
      } else if (key === '\u0003') {
        process.exit(130);
      } else if (key === '\u007f') {
        password = password.slice(0, -1);
      } else {
        password += key;
      }
    };
    process.stdin.on('data', onData);
  });
}

async function withContext<T>(
  config: AppConfig,
  work: (app: INestApplicationContext) => Promise<T>,
  { migrate = true }: { migrate?: boolean } = {},
): Promise<T> {
  const app = await NestFactory.createApplicationContext(CliModule.forRoot(config), {
    logger: ['error', 'warn'],
  });
  let result: T;
  try {
    const source = app.get<DataSource>(getDataSourceToken());
    if (migrate) await source.runMigrations({ transaction: 'each' });
    else if (await source.showMigrations())
      throw new UsageError('the database has pending migrations: run "migrate" first');
    result = await work(app);
  } catch (error) {
    // A database that failed the work may fail the close too: the work's error is the one to tell.
    await app.close().catch(() => undefined);
    throw error;
  }
  await app.close();
  return result;
}

/**
 * A database's error as its message and code (what an operator acts on); anything else, such as a
 * bug, with its stack.
 */
function describeFailure(cause: unknown): string {
  const code = (cause as { code?: unknown } | null)?.code;
  if (cause instanceof Error && typeof code === 'string')
    return cause.message.includes(code) ? cause.message : `${cause.message} (${code})`;
  return cause instanceof Error ? (cause.stack ?? cause.message) : String(cause);
}

async function loadDemo(app: INestApplicationContext, entries: number): Promise<void> {
  const started = Date.now();
  function* numbered(): Generator<NumberedRecord> {
    let line = 0;
    for (const value of demoRecords({ entriesPerSpace: entries }))
      yield { line: ++line, parsed: parseRecord(value) };
  }
  const summary = await ingestStream(app.get(IngestService), numbered(), {
    onRefused: (line, reason) => note(`demo record ${line} refused: ${reason}`),
  });
  await app.get(BoardBacklogService).settleAll();
  note(
    `Demo data loaded: ${summary.accepted} records in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

async function run(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const config = loadConfig();
  switch (command) {
    case 'migrate': {
      const app = await NestFactory.createApplicationContext(CliModule.forRoot(config), {
        logger: ['error', 'warn'],
      });
      try {
        const applied = await app
          .get<DataSource>(getDataSourceToken())
          .runMigrations({ transaction: 'each' });
        note(
          applied.length
            ? `Applied ${applied.map((m) => m.name).join(', ')}`
            : 'Database is up to date',
        );
      } finally {
        await app.close();
      }
      return 0;
    }
    case 'admin': {
      if (rest[0] !== 'create') throw new UsageError('usage: admin create --email E');
      const email = option(rest, '--email');
      if (!email) throw new UsageError('admin create needs --email E');
      if (rest.some((arg) => arg === '--password' || arg.startsWith('--password=')))
        throw new UsageError(
          'the password is read from a prompt or standard input, never from arguments',
        );
      const password = await readPassword();
      const created = await withContext(config, (app) =>
        app.get(AdminsService).create(email, password),
      );
      note(`Created dashboard admin ${created.email}. Sign in at /dashboard.`);
      return 0;
    }
    case 'token': {
      const usage = 'usage: token create --name NAME [--scope query,ingest]';
      if (rest[0] !== 'create') throw new UsageError(usage);
      const name = option(rest, '--name');
      if (!name) throw new UsageError(`token create needs --name NAME\n${usage}`);
      const scopeList = option(rest, '--scope');
      let scopes: TokenScope[] = [...DEFAULT_TOKEN_SCOPES];
      try {
        if (scopeList !== undefined)
          scopes = parseTokenScopes(scopeList.split(',').map((scope) => scope.trim()));
      } catch (error) {
        if (!(error instanceof LoyaltyException)) throw error;
        throw new UsageError(`${error.message}\n${usage}`);
      }
      const created = await withContext(config, (app) =>
        app.get(AccessTokensService).create(name, scopes),
      ).catch((error: unknown) => {
        if (error instanceof LoyaltyException) throw new UsageError(error.message);
        throw error;
      });
      process.stdout.write(`${created.token}\n`);
      note(
        `Created token "${created.name}" (${created.prefix}...) with scopes ${created.scopes.join(', ')}. It is shown only this once: store it now.`,
      );
      return 0;
    }
    case 'import': {
      const file = rest[0];
      if (!file || file.startsWith('--'))
        throw new UsageError('usage: import FILE [--batch-size N]');
      if (!existsSync(file)) throw new UsageError(`no such file: ${file}`);
      const batchSize = positiveInt(option(rest, '--batch-size'), '--batch-size', 200_000);
      const input = createReadStream(file);
      const progress = new ImportProgress(statSync(file).size, input);
      let summary: IngestSummary;
      try {
        summary = await withContext(config, async (app) => {
          const applied = await ingestStream(app.get(IngestService), readNdjson(input), {
            batchSize,
            // MySQL/MariaDB: two transactions at once per batch, over separate address ranges.
            parts: 2,
            onRefused: (line, reason) => progress.note(`line ${line}: ${reason}`),
            onProgress: (sofar) => progress.update(sofar),
          });
          // SQLite: board changes left in the change log (see BoardBacklog) go into the boards'
          // rows before the process ends, as part of the import's time.
          await app.get(BoardBacklogService).settleAll();
          return applied;
        });
      } catch (error) {
        if (!(error instanceof IngestStopped)) throw error;
        progress.finish(error.summary);
        note(`Import of ${file} stopped at line ${error.line}: ${describeFailure(error.cause)}`);
        note(`Applied before it: ${describeSummary(error.summary)}.`);
        note(
          error.partly
            ? `Of the batch from line ${error.line}, only the part counted above was applied; nothing after it.`
            : `Nothing from line ${error.line} on was applied, unless the failure came during its batch's commit.`,
        );
        note('Run the same command again to go on: records already applied count as duplicates.');
        return 1;
      }
      progress.finish(summary);
      note(`Imported ${file}: ${describeSummary(summary)}`);
      return summary.refused > 0 ? 1 : 0;
    }
    case 'export': {
      const spaceId = positiveInt(option(rest, '--space'), '--space', 0);
      if (spaceId === 0) throw new UsageError('usage: export --space ID [--sprint ID]');
      const sprint = option(rest, '--sprint');
      const sprintId = sprint === undefined ? null : positiveInt(sprint, '--sprint', 0);
      await withContext(
        config,
        async (app) => {
          const board = app.get(LeaderboardsService).exportBoard(spaceId, sprintId);
          async function* csv(): AsyncGenerator<string> {
            let text = `${BOARD_CSV_HEADER}\n`;
            for await (const row of board) {
              text += `${boardCsvLine(row)}\n`;
              if (text.length >= 64 * 1024) {
                yield text;
                text = '';
              }
            }
            yield text;
          }
          try {
            await pipeline(Readable.from(csv()), process.stdout, { end: false });
          } catch (error) {
            // `export ... | head` closes the pipe early: that is a reader's choice, not a failure.
            if ((error as NodeJS.ErrnoException).code !== 'EPIPE') throw error;
          }
        },
        { migrate: false },
      );
      return 0;
    }
    case 'demo': {
      const entries = positiveInt(option(rest, '--entries'), '--entries', 5000);
      await withContext(config, (app) => loadDemo(app, entries));
      return 0;
    }
    case 'setup-demo': {
      const entries = positiveInt(option(rest, '--entries'), '--entries', 5000);
      const token = await withContext(config, async (app) => {
        if (!(await app.get(SpacesService).findSpace(1))) await loadDemo(app, entries);
        else note('Database already holds data: demo load skipped.');
        return app.get(AccessTokensService).create(`demo ${new Date().toISOString()}`);
      });
      const url = `http://localhost:${config.port}/query`;
      note('');
      note(`Access token (shown once): ${token.token}`);
      note('Try it once the server below is listening:');
      note(
        `  curl -s ${url} -H 'Content-Type: application/json' -H 'access-token: ${token.token}' \\\n` +
          `    -d '{"query":"{ space(id: 1) { id name loyaltyPointsRanks { totalCount pageInfo { hasNextPage endCursor } list { rank points address { address username } } } } }"}'`,
      );
      note(
        `Dashboard: http://localhost:${config.port}/dashboard, after npm run -s cli -- admin create --email you@example.com`,
      );
      note('');
      return 0;
    }
    case 'schema': {
      const sdl = await printSchemaOf(config);
      const out = option(rest, '--out');
      if (out) writeFileSync(out, sdl);
      else process.stdout.write(sdl);
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${command}"\n\n${HELP}`);
  }
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (
      error instanceof UsageError ||
      error instanceof ConfigError ||
      error instanceof AdminInputError ||
      error instanceof LoyaltyException
    ) {
      note(error.message);
      process.exit(2);
    }
    // A stopped demo load says where; a database's error is told in its own words.
    if (error instanceof IngestStopped)
      note(`Stopped at record ${error.line}: ${describeFailure(error.cause)}`);
    else note(describeFailure(error));
    process.exit(1);
  },
);
