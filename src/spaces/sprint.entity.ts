import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asNumber } from '../storage/schema/numeric.transformer';

@Entity({ name: 'sprints' })
@Index('ix_sprints_space', ['spaceId', 'startTime'])
export class SprintEntity {
  @PrimaryColumn({ type: 'integer' })
  id!: number;

  @Column({ name: 'space_id', type: 'integer' })
  spaceId!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  /** Epoch milliseconds, inclusive. */
  @Column({ name: 'start_time', type: 'bigint', transformer: asNumber })
  startTime!: number;

  /** Epoch milliseconds, exclusive. */
  @Column({ name: 'end_time', type: 'bigint', transformer: asNumber })
  endTime!: number;
}
