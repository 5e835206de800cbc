import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Values every instance must agree on, such as the cursor signing secret. */
@Entity({ name: 'service_settings' })
export class ServiceSettingEntity {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  name!: string;

  @Column({ type: 'text' })
  value!: string;
}
