import { Entity, PrimaryColumn } from 'typeorm';
import { KEY_COLUMN } from '../storage/schema/key-column';

@Entity({ name: 'quest_participants' })
export class QuestParticipantEntity {
  @PrimaryColumn({ name: 'quest_id', type: 'varchar', length: 128, ...KEY_COLUMN })
  questId!: string;

  @PrimaryColumn({ name: 'address_key', type: 'varchar', length: 128, ...KEY_COLUMN })
  addressKey!: string;
}
