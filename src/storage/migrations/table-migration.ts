import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { SchemaTarget } from '../engine/schema-target';
import { engineOf } from '../engines';
import {
  RequirementsKey,
  SERVER_REQUIREMENTS,
  ServerRequirements,
} from '../schema/server-requirements';

export { MigrationRefusedError } from '../schema/server-requirements';
export type { SchemaTarget } from '../engine/schema-target';

/**
 * A migration that creates tables. up() calls {@link prepare} first: the database's preflight,
 * which checks read-only that the server can take the whole migration and refuses before anything
 * is created (MySQL and MariaDB commit each DDL statement at once, so one that failed half-way
 * would leave a half-made schema that every retry then trips over), and answers how the DDL is
 * written there.
 */
export abstract class TableMigration implements MigrationInterface {
  abstract readonly name: string;
  /** The tables up() creates: one already there, with no record of this migration, is refused. */
  protected abstract readonly creates: readonly string[];

  abstract up(queryRunner: QueryRunner): Promise<void>;
  abstract down(queryRunner: QueryRunner): Promise<void>;

  /**
   * What the schema needs of a server of this kind, and how it is written there. A hook: a spec
   * can ask for the other flavour's, or for a collation no server has.
   */
  protected requirementsFor(server: RequirementsKey): ServerRequirements {
    return SERVER_REQUIREMENTS[server];
  }

  /** The preflight: throws MigrationRefusedError when the migration cannot run here. */
  protected prepare(queryRunner: QueryRunner): Promise<SchemaTarget> {
    return engineOf(queryRunner).prepareSchema(queryRunner, {
      name: this.name,
      creates: this.creates,
      requirementsFor: (server) => this.requirementsFor(server),
    });
  }
}
