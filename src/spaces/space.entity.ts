import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

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

  /**
   * A second, readable name clients of Galxe's API look the space up by (`space(alias:)`): lower
   * case, unique in the deployment; null when none is set (migration 1764700000000).
   */
  @Index('ux_spaces_alias', { unique: true })
  @Column({ type: 'varchar', length: 64, nullable: true, default: null })
  alias!: string | null;
}
