import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asNumber } from '../../storage/schema/numeric.transformer';
import { KEY_COLUMN } from '../../storage/schema/key-column';

/**
 * An address's running total on one board (sprintId 0 = all-time). Rows at 0 points or below stay
 * (they carry the running total) but are not on the board. A WITHOUT ROWID table on SQLite
 * (migration 1764100000000); the option means nothing elsewhere.
 */
@Entity({ name: 'board_entries', withoutRowid: true })
// (space_id, sprint_id, points DESC, reached_at, address_key): the migration writes it by hand,
// since TypeORM cannot declare a descending column.
@Index('ix_board_entries_rank', { synchronize: false })
export class BoardEntryEntity {
  @PrimaryColumn({ name: 'space_id', type: 'integer' })
  spaceId!: number;

  @PrimaryColumn({ name: 'sprint_id', type: 'integer' })
  sprintId!: number;

  @PrimaryColumn({ name: 'address_key', type: 'varchar', length: 128, ...KEY_COLUMN })
  addressKey!: string;

  @Column({ type: 'bigint', transformer: asNumber })
  points!: number;

  @Column({ name: 'reached_at', type: 'bigint', transformer: asNumber })
  reachedAt!: number;

  /**
   * reached_at as the entry's latest upsert found it (MySQL/MariaDB, for the rank buckets: see
   * DirectBoardTotalsStore.add); 0 on SQLite, whose backlog knows the old keys itself.
   */
  @Column({ name: 'prior_reached_at', type: 'bigint', default: 0, transformer: asNumber })
  priorReachedAt!: number;
}
