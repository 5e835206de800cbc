import { Inject, Injectable } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { ReadSnapshot } from '../engine/read-snapshot';
import { engineOf } from '../engines';

export type { ReadSnapshot, SnapshotRow } from '../engine/read-snapshot';

/**
 * Opens {@link ReadSnapshot}s on the module's database: a read transaction on SQLite (WAL),
 * REPEATABLE READ with a consistent snapshot on MySQL/MariaDB, a REPEATABLE READ read-only
 * transaction on PostgreSQL, each on a connection of its own.
 */
@Injectable()
export class ReadSnapshots {
  constructor(@Inject(getDataSourceToken()) private readonly dataSource: DataSource) {}

  /**
   * A new snapshot. On SQLite it is taken before this returns (the call is synchronous up to its
   * promise), so a caller in a commit hook sees exactly what that commit left; on a server when
   * the returned promise resolves.
   */
  open(): Promise<ReadSnapshot> {
    try {
      return engineOf(this.dataSource).openSnapshot(this.dataSource);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  }
}
