import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asNumber } from '../../storage/schema/numeric.transformer';
import { KEY_COLUMN } from '../../storage/schema/key-column';

/**
 * The ledger: one row per accepted points record, keyed by the sender's unique key. A WITHOUT
 * ROWID table on SQLite (migration 1764100000000); the option means nothing elsewhere.
 *
 * Its time index is (space_id, occurred_at) on MySQL/MariaDB and (space_id, day) on SQLite
 * (migration 1764200000000), which TypeORM cannot describe: the migrations own both.
 */
@Entity({ name: 'points_events', withoutRowid: true })
@Index('ix_points_events_space_time', { synchronize: false })
@Index('ix_points_events_space_day', { synchronize: false })
@Index('ix_points_events_address', ['spaceId', 'addressKey', 'occurredAt'])
export class PointsEventEntity {
  @PrimaryColumn({ name: 'event_key', type: 'varchar', length: 191, ...KEY_COLUMN })
  key!: string;

  @Column({ name: 'space_id', type: 'integer' })
  spaceId!: number;

  @Column({ name: 'address_key', type: 'varchar', length: 128, ...KEY_COLUMN })
  addressKey!: string;

  @Column({ type: 'integer' })
  points!: number;

  @Column({ name: 'occurred_at', type: 'bigint', transformer: asNumber })
  occurredAt!: number;

  /** The sender's reason for the points (migration 1764600000000); null when none was given. */
  @Column({ type: 'varchar', length: 200, nullable: true })
  reason!: string | null;
}
