import type { DataSource } from 'typeorm';
import type { DatabaseProbe } from '../engine/database-probe';

/** SQLite: a query on the connection itself (there is no server to wait for). */
export class EmbeddedProbe implements DatabaseProbe {
  constructor(private readonly dataSource: DataSource) {}

  async select1(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }

  reset(): void {}

  limitStatements(): void {}

  close(): void {}
}
