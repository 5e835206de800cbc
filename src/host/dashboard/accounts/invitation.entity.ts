import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asNumber } from '../../../storage/schema/numeric.transformer';
import type { SpaceRole } from './roles';

/**
 * An invitation to join a space with a role. Its link is shown once to the owner who made it;
 * only the SHA-256 of the link's secret is kept. Used once, within its lifetime.
 */
@Entity({ name: 'invitations' })
@Index('ix_invitations_space', ['spaceId'])
export class InvitationEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Index('ux_invitations_token', { unique: true })
  @Column({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash!: string;

  @Column({ name: 'space_id', type: 'integer' })
  spaceId!: number;

  /** Lower-cased. */
  @Column({ type: 'varchar', length: 254 })
  email!: string;

  @Column({ type: 'varchar', length: 16 })
  role!: SpaceRole;

  @Column({ name: 'invited_by', type: 'varchar', length: 36 })
  invitedBy!: string;

  @Column({ name: 'created_at', type: 'bigint', transformer: asNumber })
  createdAt!: number;

  @Column({ name: 'expires_at', type: 'bigint', transformer: asNumber })
  expiresAt!: number;

  /** When it was accepted or withdrawn; null while it is open. */
  @Column({
    name: 'closed_at',
    type: 'bigint',
    nullable: true,
    default: null,
    transformer: asNumber,
  })
  closedAt!: number | null;
}
