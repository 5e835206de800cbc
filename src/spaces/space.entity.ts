import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'spaces' })
export class SpaceEntity {
  @PrimaryColumn({ type: 'integer' })
  id!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'text', nullable: true, default: null })
  description!: string | null;

  /** A private space is read only by its own tokens and deployment tokens. */
  @Column({ name: 'is_private', type: 'boolean', default: false })
  isPrivate!: boolean;
}
