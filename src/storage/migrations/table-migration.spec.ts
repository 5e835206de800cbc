import type { QueryRunner } from 'typeorm';
import { InitialSchema1763700000000 } from '../migrations/1763700000000-initial-schema';
import { BoardChanges1764000000000 } from '../migrations/1764000000000-board-changes';
import { MigrationRefusedError } from './table-migration';

/**
 * A query runner on a MySQL 8 server, as far as the preflight reads it: no MySQL 8 server runs
 * where the specs do. It answers the preflight's reads and records every other statement.
 */
function mysqlServer(version: string, type: 'mysql' | 'mariadb') {
  const collations = ['utf8mb4_0900_bin', 'utf8mb4_0900_ai_ci', 'utf8mb4_bin'];
  const sent: string[] = [];
  const answer = (sql: string, parameters: unknown[] = []): unknown[] => {
    if (sql.startsWith('SELECT VERSION()')) return [{ version }];
    if (sql.startsWith('SELECT DATABASE()')) return [{ database: 'loyalty' }];
    if (sql.includes('information_schema.COLLATIONS')) {
      return collations
        .filter((name) => parameters.includes(name))
        .map((name) => ({ name, charset: 'utf8mb4' }));
    }
    if (sql.includes('information_schema.CHARACTER_SETS')) return [{ name: 'utf8mb4' }];
    if (sql.includes('information_schema.ENGINES')) return [{ support: 'DEFAULT' }];
    if (sql.includes('information_schema.TABLES')) return [];
    if (sql.includes('information_schema.COLUMNS')) return [];
    sent.push(sql.replace(/\s+/g, ' '));
    return [];
  };
  const runner = {
    connection: { options: { type } },
    query: (sql: string, parameters?: unknown[]) => Promise.resolve(answer(sql, parameters)),
  } as unknown as QueryRunner;
  return { runner, sent };
}

describe('the schema migrations on MySQL 8', () => {
  it.each(['mysql', 'mariadb'] as const)(
    'give every key column utf8mb4_0900_bin, with the data source typed %s',
    async (type) => {
      const { runner, sent } = mysqlServer('8.0.36', type);
      await new InitialSchema1763700000000().up(runner);
      await new BoardChanges1764000000000().up(runner);
      const columns = [
        ...sent.join('\n').matchAll(/(\w+) VARCHAR\(\d+\)( CHARACTER SET \w+ COLLATE \w+)?/g),
      ];
      const keys = columns.filter(([, , collation]) => collation !== undefined);
      expect(keys.map(([, name]) => name).sort()).toEqual(
        [
          'address_key', // profiles
          'id', // quests
          'quest_id',
          'address_key', // quest_participants
          'event_key',
          'address_key', // points_events
          'address_key', // board_entries
          'address_key', // board_changes
        ].sort(),
      );
      for (const [, , collation] of keys) {
        expect(collation).toBe(' CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_bin');
      }
      expect(sent.join('\n')).not.toContain('nopad');
      expect(sent.filter((sql) => sql.startsWith('CREATE TABLE'))).toHaveLength(11);
      for (const sql of sent.filter((statement) => statement.startsWith('CREATE TABLE'))) {
        expect(sql).toMatch(/\) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4$/);
      }
    },
  );

  it('refuses MySQL 8.0.16 and 5.7 before sending a statement', async () => {
    for (const version of ['8.0.16', '5.7.44-log']) {
      const { runner, sent } = mysqlServer(version, 'mysql');
      const refusal = new InitialSchema1763700000000().up(runner);
      await expect(refusal).rejects.toThrow(MigrationRefusedError);
      await expect(refusal).rejects.toThrow(
        `Migration InitialSchema1763700000000 refused before changing anything: the server is ` +
          `MySQL ${version.replace('-log', '')}; the schema needs MySQL 8.0.17 or later`,
      );
      expect(sent).toEqual([]);
    }
  });
});
