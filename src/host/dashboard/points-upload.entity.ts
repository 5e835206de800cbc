import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { asNumber } from '../../storage/schema/numeric.transformer';

/** Where an upload is: previewed, being applied, applied, or stopped by a failure mid-way. */
export type PointsUploadStatus = 'ready' | 'applying' | 'applied' | 'stopped';

const nullableBigint = {
  type: 'bigint',
  nullable: true,
  default: null,
  transformer: asNumber,
} as const;
const nullableCount = { type: 'integer', nullable: true, default: null } as const;

/**
 * A file of points (or pasted lines) uploaded for a space, kept for its preview and its apply; its
 * lines are points_upload_lines. Lines are dropped when it expires (expired_at); the summary stays
 * in the space's list of uploads.
 */
@Entity({ name: 'points_uploads' })
@Index('ix_points_uploads_space', ['spaceId', 'createdAt'])
export class PointsUploadEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'space_id', type: 'integer' })
  spaceId!: number;

  /** The account that uploaded it. */
  @Column({ name: 'account_id', type: 'varchar', length: 36 })
  accountId!: string;

  @Column({ name: 'created_at', type: 'bigint', transformer: asNumber })
  createdAt!: number;

  /** The file's name, or "Pasted lines". */
  @Column({ type: 'varchar', length: 255 })
  name!: string;

  /** Of the space id and the normalised text (see normaliseUpload): the lines' keys derive from it. */
  @Column({ name: 'content_sha256', type: 'varchar', length: 64 })
  contentSha256!: string;

  @Column({ type: 'varchar', length: 8 })
  format!: 'csv' | 'ndjson';

  /** The reason of lines that give none. */
  @Column({ type: 'varchar', length: 200, nullable: true, default: null })
  reason!: string | null;

  /**
   * When the points of lines without occurredAt count from: set by the first apply (the time of
   * an earlier apply of the same file, found in the ledger, or the apply's own), kept for a resumed
   * one; null before.
   */
  @Column({ name: 'occurred_at', ...nullableBigint })
  occurredAt!: number | null;

  /** Lines of points, valid or not. */
  @Column({ name: 'line_count', type: 'integer' })
  lineCount!: number;

  @Column({ name: 'error_count', type: 'integer' })
  errorCount!: number;

  /** The sums of the valid lines' grants and of their deductions (as a positive number). */
  @Column({ name: 'points_granted', type: 'bigint', transformer: asNumber })
  pointsGranted!: number;

  @Column({ name: 'points_deducted', type: 'bigint', transformer: asNumber })
  pointsDeducted!: number;

  @Column({ type: 'varchar', length: 16 })
  status!: PointsUploadStatus;

  /** Valid lines the current (or last) apply has been through. */
  @Column({ type: 'integer', default: 0 })
  progress!: number;

  /** The last sign of life of the apply under way: a stale one was cut off (a restart). */
  @Column({ name: 'heartbeat_at', ...nullableBigint })
  heartbeatAt!: number | null;

  /** The last apply's outcomes: lines applied, already applied (the same key), refused. */
  @Column({ name: 'applied_count', ...nullableCount })
  appliedCount!: number | null;

  @Column({ name: 'unchanged_count', ...nullableCount })
  unchangedCount!: number | null;

  @Column({ name: 'refused_count', ...nullableCount })
  refusedCount!: number | null;

  @Column({ name: 'applied_at', ...nullableBigint })
  appliedAt!: number | null;

  @Column({ name: 'applied_by', type: 'varchar', length: 36, nullable: true, default: null })
  appliedBy!: string | null;

  /** Why the last apply stopped, when it did. */
  @Column({ type: 'varchar', length: 300, nullable: true, default: null })
  failure!: string | null;

  /** When its lines were dropped; null while they are kept. */
  @Column({ name: 'expired_at', ...nullableBigint })
  expiredAt!: number | null;
}
