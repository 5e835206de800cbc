import { Column, Entity, PrimaryColumn } from 'typeorm';
import { KEY_COLUMN } from '../storage/schema/key-column';

/** One row per address ever seen; points create it, profile records fill it in. */
@Entity({ name: 'profiles' })
export class ProfileEntity {
  /** The lower-cased address. */
  @PrimaryColumn({ name: 'address_key', type: 'varchar', length: 128, ...KEY_COLUMN })
  addressKey!: string;

  /** The address as first received. */
  @Column({ type: 'varchar', length: 128 })
  address!: string;

  @Column({ type: 'varchar', length: 255, nullable: true, default: null })
  username!: string | null;

  @Column({ type: 'varchar', length: 2048, nullable: true, default: null })
  avatar!: string | null;
}
