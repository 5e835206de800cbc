/** How the DDL of a migration that creates tables is written on the database it runs on. */
export interface SchemaTarget {
  /**
   * A key column of this length (addresses, quest ids, event keys), compared byte by byte so that
   * ORDER BY matches the code-unit order of cursors and JavaScript, and "k1" and "k1 " are two keys.
   */
  key: (length: number) => string;
  /** What every CREATE TABLE ends with (an engine and a character set, or nothing). */
  readonly tableOptions: string;
  /** A column definition: a 64-bit key numbered by the database, never handed out twice. */
  readonly sequenceKey: string;
  /**
   * A primary key's columns, as written with DESC where the rank order needs it; where a primary
   * key cannot be descending (PostgreSQL), ascending: its index is then read backwards or sorted.
   */
  primaryKey: (columns: string) => string;
  /**
   * What a CREATE TABLE of a table read only through its primary key ends with, after
   * {@link tableOptions}: SQLite's WITHOUT ROWID, so that a write touches one B-tree, not two.
   */
  readonly clustered: string;
}
