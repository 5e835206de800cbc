import type { DataSource } from 'typeorm';
import type { DatabaseProbe } from './engine/database-probe';
import { engineOf } from './engines';

export type { DatabaseProbe } from './engine/database-probe';

/** The probe for a data source's database (see DatabaseProbe). */
export function createDatabaseProbe(
  dataSource: DataSource,
  connectTimeoutMs: number,
): DatabaseProbe {
  return engineOf(dataSource).probe(dataSource, connectTimeoutMs);
}
