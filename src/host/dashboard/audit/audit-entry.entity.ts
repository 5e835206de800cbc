import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asNumber } from '../../../storage/schema/numeric.transformer';

/**
 * One entry of the audit trail: who did what, when, from which address. Never a secret. The
 * service only ever inserts and reads these rows.
 */
@Entity({ name: 'audit_log' })
@Index('ix_audit_log_space', ['spaceId', 'id'])
export class AuditEntryEntity {
  /** Time-ordered: entries written in one millisecond by one instance keep their order. */
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ type: 'bigint', transformer: asNumber })
  at!: number;

  /** The account that acted; null for the command line or someone not signed in. */
  @Column({ name: 'actor_id', type: 'varchar', length: 36, nullable: true, default: null })
  actorId!: string | null;

  /** The actor as shown: an email, or `cli`. */
  @Column({ type: 'varchar', length: 254 })
  actor!: string;

  @Column({ type: 'varchar', length: 64 })
  action!: string;

  /** The space acted on; null for the deployment. */
  @Column({ name: 'space_id', type: 'integer', nullable: true, default: null })
  spaceId!: number | null;

  /** What was acted on, as shown: a token's name and prefix, a member's email. */
  @Column({ type: 'varchar', length: 254, nullable: true, default: null })
  target!: string | null;

  /** More about the action, as JSON (scopes, a role, a points amount and reason). */
  @Column({ type: 'varchar', length: 1000, nullable: true, default: null })
  detail!: string | null;

  /** The client address; null for the command line. */
  @Column({ type: 'varchar', length: 45, nullable: true, default: null })
  address!: string | null;
}
