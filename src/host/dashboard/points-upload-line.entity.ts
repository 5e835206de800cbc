import { Column, Entity, PrimaryColumn } from 'typeorm';
import { asNumber } from '../../storage/schema/numeric.transformer';

/**
 * One line of a points upload, by its line number in the file: a valid one (address, points,
 * reason, its own time or none: the upload's), or one refused when the file was read (error).
 * `refusal` says why the ledger refused a valid one at the last apply.
 */
@Entity({ name: 'points_upload_lines' })
export class PointsUploadLineEntity {
  @PrimaryColumn({ name: 'upload_id', type: 'varchar', length: 36 })
  uploadId!: string;

  @PrimaryColumn({ type: 'integer' })
  line!: number;

  @Column({ type: 'varchar', length: 128, nullable: true, default: null })
  address!: string | null;

  @Column({ type: 'integer', nullable: true, default: null })
  points!: number | null;

  @Column({ type: 'varchar', length: 200, nullable: true, default: null })
  reason!: string | null;

  @Column({
    name: 'occurred_at',
    type: 'bigint',
    nullable: true,
    default: null,
    transformer: asNumber,
  })
  occurredAt!: number | null;

  @Column({ type: 'varchar', length: 300, nullable: true, default: null })
  error!: string | null;

  @Column({ type: 'varchar', length: 300, nullable: true, default: null })
  refusal!: string | null;
}
