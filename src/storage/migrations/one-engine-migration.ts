import { Logger } from '@nestjs/common';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { DatabaseEngineName } from '../dialect/sql-dialect';
import { dialectOf } from '../engines';

/**
 * A migration that exists to reshape one engine's tables (SQLite's layout of its ledger, say):
 * on every other database it records itself as applied, changes nothing, and says so in the log.
 */
export abstract class OneEngineMigration implements MigrationInterface {
  abstract readonly name: string;
  /** The engine whose tables it reshapes. */
  protected abstract readonly engine: DatabaseEngineName;
  /** What it does there, for the log line of every other database ("makes ... WITHOUT ROWID"). */
  protected abstract readonly purpose: string;
  /** What the migration does there. */
  protected abstract reshape(queryRunner: QueryRunner): Promise<void>;
  /** And how it is undone there. */
  protected abstract undo(queryRunner: QueryRunner): Promise<void>;

  async up(queryRunner: QueryRunner): Promise<void> {
    if (this.appliesTo(queryRunner)) await this.reshape(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (this.appliesTo(queryRunner)) await this.undo(queryRunner);
  }

  private appliesTo(queryRunner: QueryRunner): boolean {
    const dialect = dialectOf(queryRunner);
    if (dialect.engine === this.engine) return true;
    new Logger('Migrations').log(
      `${this.name}: nothing to do on ${dialect.product} (on ${this.engine} only, it ${this.purpose})`,
    );
    return false;
  }
}
