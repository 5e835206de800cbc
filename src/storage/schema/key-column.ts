/**
 * The column options of a key column (addresses, quest ids, event keys): compared byte by byte
 * (see SchemaTarget.key). PostgreSQL's schema diff compares a column's collation with the
 * entity's, so the entity names it; MySQL's and SQLite's do not (their migrations choose a binary
 * collation of their own), and the migrations, not TypeORM, create every column.
 */
export const KEY_COLUMN = { collation: 'C' } as const;
