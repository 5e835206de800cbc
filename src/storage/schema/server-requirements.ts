/** A database product the schema is written for, as messages name it. */
export type ServerProduct = 'MySQL' | 'MariaDB' | 'SQLite' | 'PostgreSQL';

/** Which requirements apply: the MySQL-protocol servers apart, since their DDL differs. */
export type RequirementsKey = 'mysql' | 'mariadb' | 'sqlite' | 'postgres';

/** What the schema needs of a database server, and how its DDL is written there. */
export interface ServerRequirements {
  /** The product, as messages name it. */
  product: ServerProduct;
  /** The oldest version the schema is made for (docs/operations.md names the same). */
  minimumVersion: string;
  /**
   * The collation of key columns (addresses, quest ids, event keys): binary, so that ORDER BY
   * matches the code-unit order of cursors and JavaScript, and NO PAD, so that "k1" and "k1 " are
   * two keys. Absent on SQLite, whose default BINARY collation is both. PostgreSQL's "C" compares
   * bytes, and its VARCHAR never pads.
   */
  keyCollation?: string;
}

/** Whether a product speaks MySQL's protocol (and so needs its character set and InnoDB). */
const isMysqlFamily = (product: ServerProduct) => product === 'MySQL' || product === 'MariaDB';

/** The character set of every MySQL/MariaDB table and key column. */
export const SCHEMA_CHARSET = 'utf8mb4';

/**
 * Per server: MySQL 8.0.17 brought utf8mb4_0900_bin; MariaDB honours descending index columns
 * (the rank index) from 10.8; SQLite 3.35 brought RETURNING and DROP COLUMN; PostgreSQL 13 is the
 * oldest whose every statement here is tested in kind (the specs run on 15).
 */
export const SERVER_REQUIREMENTS: Readonly<Record<RequirementsKey, Readonly<ServerRequirements>>> =
  {
    mysql: { product: 'MySQL', minimumVersion: '8.0.17', keyCollation: 'utf8mb4_0900_bin' },
    mariadb: { product: 'MariaDB', minimumVersion: '10.8', keyCollation: 'utf8mb4_nopad_bin' },
    sqlite: { product: 'SQLite', minimumVersion: '3.35.0' },
    postgres: { product: 'PostgreSQL', minimumVersion: '13', keyCollation: 'C' },
  };

/** A migration refused by its preflight: nothing of it was applied. */
export class MigrationRefusedError extends Error {
  override readonly name = 'MigrationRefusedError';

  constructor(
    readonly migration: string,
    readonly problems: readonly string[],
    /** Tables it creates that are there already, with no record of it having run. */
    readonly leftoverTables: readonly string[] = [],
  ) {
    super(`Migration ${migration} refused before changing anything: ${problems.join('; ')}.`);
  }
}

/** What a migration learnt of the server, read-only, before its first statement. */
export interface ServerFacts {
  /** Which server answered. */
  product: ServerRequirements['product'];
  /** The server's version string (`VERSION()`, `sqlite_version()`, `server_version`). */
  version: string;
  /** The database the tables would go to; null when the connection names none. */
  database: string | null;
  /** MySQL/MariaDB: the server's collations of the names asked for, with their character set. */
  collations: ReadonlyMap<string, string>;
  /**
   * MySQL/MariaDB: whether the server has the schema's character set; PostgreSQL: whether the
   * database's encoding is UTF8 (named by `encoding`).
   */
  hasCharset: boolean;
  /** PostgreSQL: the database's encoding. */
  encoding?: string;
  /** MySQL/MariaDB: InnoDB's SUPPORT in information_schema.ENGINES (YES, DEFAULT, NO, DISABLED). */
  innodb: string | null;
  /** Tables the migration would create that the database already has. */
  existingTables: readonly string[];
}

/** The leading numbers of a version string: `10.11.6-MariaDB-1` is [10, 11, 6]. */
export function versionNumbers(version: string): number[] {
  // MariaDB behind some proxies answers with the handshake's `5.5.5-` prefix.
  const match = /^(?:5\.5\.5-)?(\d+(?:\.\d+)*)/.exec(version.trim());
  return match ? match[1].split('.').map(Number) : [];
}

/** Whether `version` is `minimum` or later (missing parts count as 0). */
export function versionAtLeast(version: string, minimum: string): boolean {
  const [have, need] = [versionNumbers(version), versionNumbers(minimum)];
  if (have.length === 0) return false;
  for (let i = 0; i < Math.max(have.length, need.length); i++) {
    const [a, b] = [have[i] ?? 0, need[i] ?? 0];
    if (a !== b) return a > b;
  }
  return true;
}

/**
 * Everything that keeps a migration from running to its end on this server, each with what to do
 * about it; empty when it can run.
 */
export function findProblems(facts: ServerFacts, needs: ServerRequirements): string[] {
  const problems: string[] = [];
  const server = `${facts.product} ${versionNumbers(facts.version).join('.') || facts.version}`;
  // A minimum is one product's: asked for another's DDL (a spec's hook), it says nothing here.
  if (facts.product === needs.product && !versionAtLeast(facts.version, needs.minimumVersion)) {
    problems.push(
      `the server is ${server}; the schema needs ${needs.product} ${needs.minimumVersion} or later: ` +
        'upgrade it' +
        (needs.product === 'SQLite'
          ? ' (better-sqlite3 12 brings a recent SQLite)'
          : needs.product === 'PostgreSQL'
            ? ''
            : ` (MySQL ${SERVER_REQUIREMENTS.mysql.minimumVersion} and MariaDB ${SERVER_REQUIREMENTS.mariadb.minimumVersion} are the oldest supported)`),
    );
  }
  if (needs.product === 'PostgreSQL' && !facts.hasCharset) {
    problems.push(
      `the database's encoding is ${facts.encoding ?? 'unknown'}; the tables hold UTF-8 text: ` +
        "create the database with ENCODING 'UTF8' (createdb -E UTF8 --template template0)",
    );
  }
  if (isMysqlFamily(needs.product)) {
    if (facts.database === null) {
      problems.push(
        'the connection names no database: add one to the URL (mysql://user:pass@host:3306/DATABASE)',
      );
    }
    if (!facts.hasCharset) {
      problems.push(
        `the server has no ${SCHEMA_CHARSET} character set, which every table uses: use a server built with it`,
      );
    }
    const collation = needs.keyCollation;
    if (collation !== undefined && facts.collations.get(collation) !== SCHEMA_CHARSET) {
      problems.push(
        `the server (${server}) has no ${SCHEMA_CHARSET} collation ${collation}, which key columns ` +
          'need (binary and NO PAD: case-sensitive, trailing spaces significant): use MySQL ' +
          `${SERVER_REQUIREMENTS.mysql.minimumVersion} or later (${SERVER_REQUIREMENTS.mysql.keyCollation}) ` +
          `or MariaDB ${SERVER_REQUIREMENTS.mariadb.minimumVersion} or later (${SERVER_REQUIREMENTS.mariadb.keyCollation})`,
      );
    }
    if (facts.innodb !== 'YES' && facts.innodb !== 'DEFAULT') {
      problems.push(
        `the InnoDB storage engine is ${facts.innodb === null ? 'missing' : `not available (${facts.innodb})`}: ` +
          'every table needs it; enable it on the server',
      );
    }
  }
  if (facts.existingTables.length > 0) {
    const tables = facts.existingTables.join(', ');
    problems.push(
      `the database already has ${facts.existingTables.length === 1 ? 'a table' : 'tables'} this ` +
        `migration creates (${tables}) and no record of the migration having run: left over from ` +
        "an earlier attempt that stopped half-way (MySQL/MariaDB), or another application's. If " +
        'they are left over, `loyalty migrate --repair` drops them when every one is empty and ' +
        'runs the migrations again; otherwise give the loyalty tables a database of their own',
    );
  }
  return problems;
}
