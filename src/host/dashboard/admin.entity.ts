import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asNumber } from '../../storage/schema/numeric.transformer';

/** A dashboard administrator. The password is kept as a scrypt hash only. */
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

  @Column({ name: 'created_at', type: 'bigint', transformer: asNumber })
  createdAt!: number;
}
