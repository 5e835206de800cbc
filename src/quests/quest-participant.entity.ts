import { Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'quest_participants' })
export class QuestParticipantEntity {
  @PrimaryColumn({ name: 'quest_id', type: 'varchar', length: 128 })
  questId!: string;

  @PrimaryColumn({ name: 'address_key', type: 'varchar', length: 128 })
  addressKey!: string;
}
