import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asNumber } from '../../../storage/schema/numeric.transformer';

/**
 * A dashboard account: an operator (runs the whole deployment) or a member of spaces (see
 * teams/roles.ts). The password is kept as a scrypt hash only.
 */
@Entity({ name: 'admins' })
export class AdminEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  /** Lower-cased. */
  @Index('ux_admins_email', { unique: true })
  @Column({ type: 'varchar', length: 254 })
  email!: string;

  @Column({ name: 'password_hash', type: 'varchar', length: 255 })
  passwordHash!: string;

  /** How the account is shown to others; null until one is given. */
  @Column({ type: 'varchar', length: 100, nullable: true, default: null })
  name!: string | null;

  @Column({ name: 'is_operator', type: 'boolean', default: false })
  isOperator!: boolean;

  /** A disabled account cannot sign in, and its sessions ended when it was disabled. */
  @Column({
    name: 'disabled_at',
    type: 'bigint',
    nullable: true,
    default: null,
    transformer: asNumber,
  })
  disabledAt!: number | null;

  @Column({ name: 'created_at', type: 'bigint', transformer: asNumber })
  createdAt!: number;
}
