import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'spaces' })
export class SpaceEntity {
  @PrimaryColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'text', nullable: true, default: null })
  description!: string | null;
}
