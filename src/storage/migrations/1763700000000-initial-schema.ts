import type { QueryRunner } from 'typeorm';
import { TableMigration } from './table-migration';

/**
 * The first schema. Written as SQL for each database because the rank index needs a descending
 * column (SQLite and MariaDB >= 10.8 / MySQL 8 honour it) and keys need a binary NO PAD collation
 * on MySQL and MariaDB, chosen by the server that answers (see ServerRequirements.keyCollation).
 */
export class InitialSchema1763700000000 extends TableMigration {
  name = 'InitialSchema1763700000000';
  protected readonly creates = [
    'spaces',
    'sprints',
    'profiles',
    'quests',
    'quest_participants',
    'points_events',
    'board_entries',
    'boards',
    'access_tokens',
    'service_settings',
  ];

  async up(queryRunner: QueryRunner): Promise<void> {
    const { key, tableOptions: table } = await this.prepare(queryRunner);
    const statements = [
      `CREATE TABLE spaces (
        id INTEGER NOT NULL PRIMARY KEY,
        name VARCHAR(255) NOT NULL,
        description TEXT NULL)${table}`,
      `CREATE TABLE sprints (
        id INTEGER NOT NULL PRIMARY KEY,
        space_id INTEGER NOT NULL,
        name VARCHAR(255) NOT NULL,
        start_time BIGINT NOT NULL,
        end_time BIGINT NOT NULL)${table}`,
      `CREATE INDEX ix_sprints_space ON sprints (space_id, start_time)`,
      `CREATE TABLE profiles (
        address_key ${key(128)} NOT NULL PRIMARY KEY,
        address VARCHAR(128) NOT NULL,
        username VARCHAR(255) NULL,
        avatar VARCHAR(2048) NULL)${table}`,
      `CREATE TABLE quests (
        id ${key(128)} NOT NULL PRIMARY KEY,
        space_id INTEGER NOT NULL,
        name VARCHAR(255) NOT NULL,
        status VARCHAR(16) NOT NULL,
        type VARCHAR(64) NULL,
        start_time BIGINT NULL,
        end_time BIGINT NULL,
        cap INTEGER NULL,
        participants_count INTEGER NOT NULL DEFAULT 0)${table}`,
      `CREATE TABLE quest_participants (
        quest_id ${key(128)} NOT NULL,
        address_key ${key(128)} NOT NULL,
        PRIMARY KEY (quest_id, address_key))${table}`,
      `CREATE TABLE points_events (
        event_key ${key(191)} NOT NULL PRIMARY KEY,
        space_id INTEGER NOT NULL,
        address_key ${key(128)} NOT NULL,
        points INTEGER NOT NULL,
        occurred_at BIGINT NOT NULL)${table}`,
      `CREATE INDEX ix_points_events_space_time ON points_events (space_id, occurred_at)`,
      `CREATE TABLE board_entries (
        space_id INTEGER NOT NULL,
        sprint_id INTEGER NOT NULL,
        address_key ${key(128)} NOT NULL,
        points BIGINT NOT NULL,
        reached_at BIGINT NOT NULL,
        PRIMARY KEY (space_id, sprint_id, address_key))${table}`,
      `CREATE INDEX ix_board_entries_rank
        ON board_entries (space_id, sprint_id, points DESC, reached_at, address_key)`,
      `CREATE TABLE boards (
        space_id INTEGER NOT NULL,
        sprint_id INTEGER NOT NULL,
        entry_count INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (space_id, sprint_id))${table}`,
      `CREATE TABLE access_tokens (
        id VARCHAR(36) NOT NULL PRIMARY KEY,
        name VARCHAR(100) NOT NULL,
        prefix VARCHAR(16) NOT NULL,
        token_hash VARCHAR(64) NOT NULL,
        created_at BIGINT NOT NULL,
        last_used_at BIGINT NULL,
        revoked_at BIGINT NULL)${table}`,
      `CREATE UNIQUE INDEX ux_access_tokens_hash ON access_tokens (token_hash)`,
      `CREATE TABLE service_settings (
        name VARCHAR(64) NOT NULL PRIMARY KEY,
        value TEXT NOT NULL)${table}`,
    ];
    for (const statement of statements) await queryRunner.query(statement);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const name of [...this.creates].reverse()) await queryRunner.query(`DROP TABLE ${name}`);
  }
}
