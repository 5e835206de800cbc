import { Column, Entity, PrimaryColumn } from 'typeorm';
import { asNumber } from '../../storage/schema/numeric.transformer';

/** Per board, the number of entries above 0 points: totalCount without counting rows. */
@Entity({ name: 'boards' })
export class BoardEntity {
  @PrimaryColumn({ name: 'space_id', type: 'integer' })
  spaceId!: number;

  @PrimaryColumn({ name: 'sprint_id', type: 'integer' })
  sprintId!: number;

  @Column({ name: 'entry_count', type: 'integer', default: 0 })
  entryCount!: number;

  /** SQLite: the lowest board_changes seq that board_entries may lack (see BoardBacklog). */
  @Column({ name: 'unfolded_since', type: 'bigint', nullable: true, transformer: asNumber })
  unfoldedSince!: number | null;

  /** How many times the board's rank bucket bounds changed (see RankBuckets). */
  @Column({ name: 'bucket_layout', type: 'integer', default: 0 })
  bucketLayout!: number;
}
