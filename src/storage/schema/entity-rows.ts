import type { ObjectLiteral, Repository } from 'typeorm';

type ColumnMetadata = Repository<ObjectLiteral>['metadata']['columns'][number];

/**
 * An entity read by plain SQL (a hot path, or a read with a lock or a join TypeORM would build each
 * time) through the columns its metadata names, never a list written by hand, which would drift
 * from the entity: a column added to it would read as undefined with no error. Rows become
 * entities as TypeORM's own reads make them: the driver's hydration, then the column's transformer.
 */
export class EntityRows<T extends ObjectLiteral> {
  private readonly list: readonly ColumnMetadata[];

  constructor(private readonly repository: Repository<T>) {
    this.list = repository.metadata.columns;
  }

  /**
   * Every column for a SELECT, each under its property's name (`is_private AS isPrivate`);
   * `table`: qualified by that table or alias, for a join.
   */
  columns(table?: string): string {
    const prefix = table ? `${table}.` : '';
    return this.list
      .map(({ databaseName, propertyName }) =>
        databaseName === propertyName
          ? `${prefix}${databaseName}`
          : `${prefix}${databaseName} AS ${propertyName}`,
      )
      .join(', ');
  }

  /** The entity of a row read with {@link columns}. */
  entity(row: Record<string, unknown>): T {
    const { driver } = this.repository.manager.connection;
    const entity = this.repository.metadata.create() as T;
    for (const column of this.list) {
      (entity as Record<string, unknown>)[column.propertyName] = driver.prepareHydratedValue(
        row[column.propertyName],
        column,
      );
    }
    return entity;
  }
}
