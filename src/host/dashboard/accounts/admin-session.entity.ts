import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asNumber } from '../../../storage/schema/numeric.transformer';

/** A signed-in browser: kept by the SHA-256 of its cookie value, never the value itself. */
@Entity({ name: 'admin_sessions' })
@Index('ix_admin_sessions_admin', ['adminId'])
export class AdminSessionEntity {
  @PrimaryColumn({ name: 'token_hash', type: 'varchar', length: 64 })
  tokenHash!: string;

  @Column({ name: 'admin_id', type: 'varchar', length: 36 })
  adminId!: string;

  /** The synchronizer token every state-changing request of this session must carry. */
  @Column({ name: 'csrf_token', type: 'varchar', length: 64 })
  csrfToken!: string;

  @Column({ name: 'created_at', type: 'bigint', transformer: asNumber })
  createdAt!: number;

  @Column({ name: 'expires_at', type: 'bigint', transformer: asNumber })
  expiresAt!: number;
}
