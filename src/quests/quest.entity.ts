import { Column, Entity, PrimaryColumn } from 'typeorm';
import { asNumber } from '../storage/schema/numeric.transformer';
import type { QuestStatus } from '../records/quest-status.enum';
import { KEY_COLUMN } from '../storage/schema/key-column';

@Entity({ name: 'quests' })
export class QuestEntity {
  @PrimaryColumn({ type: 'varchar', length: 128, ...KEY_COLUMN })
  id!: string;

  @Column({ name: 'space_id', type: 'integer' })
  spaceId!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'varchar', length: 16 })
  status!: QuestStatus;

  @Column({ type: 'varchar', length: 64, nullable: true, default: null })
  type!: string | null;

  @Column({
    name: 'start_time',
    type: 'bigint',
    nullable: true,
    default: null,
    transformer: asNumber,
  })
  startTime!: number | null;

  @Column({
    name: 'end_time',
    type: 'bigint',
    nullable: true,
    default: null,
    transformer: asNumber,
  })
  endTime!: number | null;

  @Column({ type: 'integer', nullable: true, default: null })
  cap!: number | null;

  /** Kept in step with quest_participants inside the transaction that adds one. */
  @Column({ name: 'participants_count', type: 'integer', default: 0 })
  participantsCount!: number;
}
