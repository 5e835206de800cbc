import { join } from 'node:path';
import { DataSource, EntityManager, Logger } from 'typeorm';

/** A real SQLite file, as the service opens it, and the statements its writer ran. */
export async function openScratchSqlite(dir: string) {
  const statements: string[] = [];
  const logger: Logger = {
    logQuery: (query) => void statements.push(query),
    logQueryError: () => undefined,
    logQuerySlow: () => undefined,
    logSchemaBuild: () => undefined,
    logMigration: () => undefined,
    log: () => undefined,
  };
  const source = await new DataSource({
    type: 'better-sqlite3',
    database: join(dir, 'units.sqlite'),
    logger,
    logging: true,
    prepareDatabase: (db: { pragma(sql: string): unknown }) => {
      db.pragma('journal_mode = WAL');
      db.pragma('busy_timeout = 5000');
    },
  }).initialize();
  await source.query('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  // A table of the module's schema: the runner takes the write lock with a statement on it.
  await source.query(
    'CREATE TABLE service_settings (name VARCHAR(64) NOT NULL PRIMARY KEY, value TEXT NOT NULL)',
  );
  statements.length = 0;
  return { source, statements };
}

export const insertNote = (manager: EntityManager, id: number) =>
  manager.query('INSERT INTO notes (id, body) VALUES (?, ?)', [id, `note ${id}`]);

/** The ids of the notes stored, in order. */
export const storedNotes = async (source: DataSource): Promise<number[]> =>
  (await source.query('SELECT id FROM notes ORDER BY id')).map((row: { id: number }) => row.id);

/** How many transactions the statements committed. */
export const commitsIn = (statements: readonly string[]): number =>
  statements.filter((sql) => sql === 'COMMIT').length;
