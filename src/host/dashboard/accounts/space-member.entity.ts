import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asNumber } from '../../../storage/schema/numeric.transformer';
import type { SpaceRole } from './roles';

/** An account's role in one space. */
@Entity({ name: 'space_members' })
@Index('ix_space_members_account', ['accountId'])
export class SpaceMemberEntity {
  @PrimaryColumn({ name: 'space_id', type: 'integer' })
  spaceId!: number;

  @PrimaryColumn({ name: 'account_id', type: 'varchar', length: 36 })
  accountId!: string;

  @Column({ type: 'varchar', length: 16 })
  role!: SpaceRole;

  @Column({ name: 'created_at', type: 'bigint', transformer: asNumber })
  createdAt!: number;
}
