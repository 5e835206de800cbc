import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { EntityManager, In, IsNull, Not, Repository } from 'typeorm';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { BatchPartlyApplied, IngestService } from '../../ingest/ingest.service';
import { PointsLedgerService } from '../../leaderboards/ledger/points-ledger.service';
import type { PointsRecord } from '../../records/ingest-record';
import type { RecordOutcome } from '../../records/record-outcome';
import { chunk } from '../../storage/dialect/sql-dialect';
import { insertRows } from '../../storage/insert-rows';
import { TransactionRunner } from '../../storage/transactions/transaction-runner';
import type { DashboardSession } from './accounts/sessions.service';
import { auditActor, AuditService } from './audit/audit.service';
import { parseReason } from './forms/points-form';
import { PointsUploadLineEntity } from './points-upload-line.entity';
import {
  KEPT_SUMMARIES,
  KEPT_UPLOAD_MS,
  KEPT_UPLOADS,
  LINES_PAGE,
  MAX_LINE_MESSAGE,
  normaliseUpload,
  parseUploadLines,
  uploadLineKey,
  validLines,
} from './forms/points-upload-parser';
import { PointsUploadEntity } from './points-upload.entity';

/** Lines applied a part at a time: the apply's progress moves, and each part commits whole. */
const APPLY_PART = 5_000;
/** Concurrent transactions a part takes on MySQL/MariaDB (see applyRecordsInParts). */
const APPLY_WAYS = 2;
/** An apply that gave no sign of life this long was cut off (a restart): it may be taken again. */
export const STALE_APPLY_MS = 2 * 60_000;
/** Line numbers a statement names (well under SQLite's and MariaDB's placeholder limits). */
const LINES_PER_STATEMENT = 500;
/** Lines without a time of their own looked up in the ledger, for an earlier apply of the file. */
const LEDGER_PROBES = 3;

const LINE_COLUMNS = [
  'upload_id',
  'line',
  'address',
  'points',
  'reason',
  'occurred_at',
  'error',
  'refusal',
] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PASTED = 'Pasted lines';

/** What the form sends: the text (pasted, or a file read by the page), its name, a reason. */
export interface UploadInput {
  content?: unknown;
  name?: unknown;
  reason?: unknown;
}

/** An apply under way, as the page polls it. */
export interface UploadProgress {
  status: PointsUploadEntity['status'];
  /** Being applied, but silent for STALE_APPLY_MS: cut off (a restart), to apply again. */
  stalled: boolean;
  expired: boolean;
  done: number;
  total: number;
  applied: number;
  unchanged: number;
  refused: number;
}

/** A line the page lists: refused when read (`message` is why), or refused at the apply. */
export interface ListedLine {
  line: number;
  message: string;
}

const invalid = (message: string) => new LoyaltyException(ErrorCode.INVALID_ARGUMENT, message);
const EXPIRED_MIDWAY = 'its lines expired during the apply';
const expired = () =>
  invalid('This upload expired and its lines are no longer kept: upload the file again');

/** A file name as shown: one line, at most 255 characters. */
function uploadName(value: unknown): string {
  const name = typeof value === 'string' ? value.replace(/[\u0000-\u001f\u007f]/g, '').trim() : '';
  return name === '' ? PASTED : name.slice(0, 255);
}

/**
 * Points uploads: a file of grants and deductions is read and stored with every line's outcome,
 * previewed, then applied through ingestion with keys derived from the file, its lines without a
 * time dated at the file's first apply here, so that the same file applied again changes nothing
 * (and points count in the sprint they were applied in). Storage is bounded: each space keeps the lines of its
 * KEPT_UPLOADS newest uploads for KEPT_UPLOAD_MS, and KEPT_SUMMARIES summaries.
 */
@Injectable()
export class PointsUploads {
  private readonly logger = new Logger(PointsUploads.name);

  constructor(
    @InjectRepository(PointsUploadEntity) private readonly uploads: Repository<PointsUploadEntity>,
    @InjectRepository(PointsUploadLineEntity)
    private readonly lines: Repository<PointsUploadLineEntity>,
    private readonly transactions: TransactionRunner,
    private readonly ingest: IngestService,
    private readonly ledger: PointsLedgerService,
    private readonly audit: AuditService,
  ) {}

  /**
   * Reads an upload and stores it with each line's outcome; answers its id. Refuses (nothing
   * stored) an upload too large or without lines, a CSV header it cannot read, a bad reason.
   */
  async create(session: DashboardSession, spaceId: number, input: UploadInput): Promise<string> {
    const content = typeof input.content === 'string' ? input.content : '';
    const reasonText = typeof input.reason === 'string' ? input.reason.trim() : '';
    const reason =
      reasonText === '' ? null : parseReason(reasonText, 'The reason for lines without one');
    const normalised = normaliseUpload(content, spaceId);
    const now = Date.now();
    const parsed = parseUploadLines(normalised, { spaceId, reason });
    const upload: PointsUploadEntity = {
      id: randomUUID(),
      spaceId,
      accountId: session.adminId,
      createdAt: now,
      name: uploadName(input.name),
      contentSha256: normalised.sha256,
      format: normalised.format,
      reason,
      occurredAt: null,
      lineCount: normalised.lineCount,
      errorCount: parsed.refused.length,
      pointsGranted: parsed.lines.reduce((sum, l) => sum + Math.max(l.points, 0), 0),
      pointsDeducted: parsed.lines.reduce((sum, l) => sum - Math.min(l.points, 0), 0),
      status: 'ready',
      progress: 0,
      heartbeatAt: null,
      appliedCount: null,
      unchangedCount: null,
      refusedCount: null,
      appliedAt: null,
      appliedBy: null,
      failure: null,
      expiredAt: null,
    };
    const rows: unknown[][] = [
      ...parsed.lines.map((l) => [l.line, l.address, l.points, l.reason, l.occurredAt, null]),
      ...parsed.refused.map((r) => [r.line, null, null, null, null, r.message]),
    ];
    await this.transactions.run(async (manager) => {
      await manager.insert(PointsUploadEntity, upload);
      await insertRows(manager, 'points_upload_lines', LINE_COLUMNS, rows, (row) => [
        upload.id,
        ...row,
        null,
      ]);
    });
    await this.expireOld(spaceId, now);
    return upload.id;
  }

  /** The upload of the space with that id, or null (none, or another space's). */
  async find(spaceId: number, uploadId: string): Promise<PointsUploadEntity | null> {
    if (!UUID.test(uploadId)) return null;
    const upload = await this.uploads.findOneBy({ id: uploadId, spaceId });
    if (!upload || !outlived(upload, Date.now())) return upload;
    await this.expireOld(spaceId, Date.now());
    return this.uploads.findOneBy({ id: uploadId, spaceId });
  }

  /** The space's uploads, newest first. */
  async recent(spaceId: number, limit = 20): Promise<PointsUploadEntity[]> {
    const read = () =>
      this.uploads.find({ where: { spaceId }, order: { createdAt: 'DESC' }, take: limit });
    const uploads = await read();
    if (!uploads.some((upload) => outlived(upload, Date.now()))) return uploads;
    await this.expireOld(spaceId, Date.now());
    return read();
  }

  /** The first valid lines, in file order. */
  firstLines(uploadId: string, limit: number): Promise<PointsUploadLineEntity[]> {
    return this.lines
      .createQueryBuilder('l')
      .where('l.upload_id = :uploadId AND l.error IS NULL', { uploadId })
      .orderBy('l.line', 'ASC')
      .take(limit)
      .getMany();
  }

  /** One page of the lines refused when the file was read (`error`) or at the apply (`refusal`). */
  async refusedLines(
    uploadId: string,
    kind: 'error' | 'refusal',
    page: number,
  ): Promise<ListedLine[]> {
    const rows = await this.lines
      .createQueryBuilder('l')
      .select(['l.line', `l.${kind}`])
      .where(`l.upload_id = :uploadId AND l.${kind} IS NOT NULL`, { uploadId })
      .orderBy('l.line', 'ASC')
      .skip((page - 1) * LINES_PAGE)
      .take(LINES_PAGE)
      .getMany();
    return rows.map((row) => ({ line: row.line, message: row[kind] ?? '' }));
  }

  progressOf(upload: PointsUploadEntity): UploadProgress {
    return {
      status: upload.status,
      stalled:
        upload.status === 'applying' && (upload.heartbeatAt ?? 0) < Date.now() - STALE_APPLY_MS,
      expired: upload.expiredAt !== null,
      done: upload.progress,
      total: validLines(upload),
      applied: upload.appliedCount ?? 0,
      unchanged: upload.unchangedCount ?? 0,
      refused: upload.refusedCount ?? 0,
    };
  }

  /**
   * Applies an upload's valid lines, a part at a time, its progress stored for the page to poll
   * (from any instance). Taken by one request at a time: one already being applied, or applied,
   * is left as it is. A failure mid-way stops it with what was applied counted; applying again
   * is safe, the lines already applied change nothing. Refuses an expired upload and one without
   * a valid line.
   */
  async apply(session: DashboardSession, upload: PointsUploadEntity, address: string) {
    if (upload.expiredAt !== null) throw expired();
    if (validLines(upload) === 0)
      throw invalid('No line of this upload is valid: there is nothing to apply');
    const occurredAt = upload.occurredAt ?? (await this.earlierApplyTime(upload)) ?? Date.now();
    const claimed = await this.claim(upload, session.adminId, occurredAt);
    if (claimed === null) return;
    const counts = { applied: 0, unchanged: 0, refused: 0 };
    let done = 0;
    let failure: string | null = null;
    let linesGone = false;
    try {
      for (let after = 0; ;) {
        const part = await this.validPart(upload.id, after);
        if (part.length === 0) {
          linesGone = after === 0;
          break;
        }
        done += await this.applyPart(claimed, part, counts);
        after = part[part.length - 1].line;
        await this.uploads.update(
          { id: upload.id },
          { progress: done, ...this.countColumns(counts), heartbeatAt: Date.now() },
        );
      }
      // Lines gone under a claimed apply: it was silent long enough to be taken for cut off, and
      // they expired meanwhile.
      if (done < validLines(upload)) failure = EXPIRED_MIDWAY;
    } catch (error) {
      failure = (error instanceof Error ? error.message : String(error)).slice(0, 300);
      this.logger.error(`Points upload ${upload.id} stopped: ${failure}`);
    }
    if (linesGone) return this.releaseExpired(upload.id);
    const appliedAt = Date.now();
    await this.uploads.update(
      { id: upload.id },
      failure === null
        ? { status: 'applied', progress: done, appliedAt, failure, ...this.countColumns(counts) }
        : { status: 'stopped', progress: done, failure, ...this.countColumns(counts) },
    );
    await this.audit.record({
      actor: auditActor(session),
      action: 'points.upload',
      spaceId: upload.spaceId,
      target: upload.name,
      detail: {
        upload: upload.id,
        lines: validLines(upload),
        ...counts,
        reason: upload.reason,
        occurredAt: new Date(claimed.occurredAt).toISOString(),
        ...(failure === null ? {} : { stopped: failure }),
      },
      address,
    });
  }

  /**
   * Takes the upload for this apply, unless another has it: a ready or stopped upload, or one
   * whose apply went silent (STALE_APPLY_MS), and not expired. Atomic, so two instances never
   * both take it. Its lines' time is set by the first apply and kept by the next ones; answers
   * the upload as taken (with that time), or null.
   */
  private async claim(
    upload: PointsUploadEntity,
    accountId: string,
    occurredAt: number,
  ): Promise<(PointsUploadEntity & { occurredAt: number }) | null> {
    const now = Date.now();
    const result = await this.uploads
      .createQueryBuilder()
      .update(PointsUploadEntity)
      .set({
        status: 'applying',
        progress: 0,
        heartbeatAt: now,
        appliedCount: 0,
        unchangedCount: 0,
        refusedCount: 0,
        appliedBy: accountId,
        failure: null,
        occurredAt: () => 'COALESCE(occurred_at, :occurredAt)',
      })
      .where('id = :id AND expired_at IS NULL', { id: upload.id })
      .andWhere(
        "(status IN ('ready', 'stopped') OR (status = 'applying' AND heartbeat_at < :stale))",
        { stale: now - STALE_APPLY_MS },
      )
      .setParameter('occurredAt', occurredAt)
      .execute();
    if (result.affected !== 1) return null;
    // The refusals of an earlier apply are told again by this one.
    await this.lines
      .createQueryBuilder()
      .update(PointsUploadLineEntity)
      .set({ refusal: null })
      .where('upload_id = :id AND refusal IS NOT NULL', { id: upload.id })
      .execute();
    const taken = await this.uploads.findOneByOrFail({ id: upload.id });
    return { ...taken, occurredAt: taken.occurredAt ?? occurredAt };
  }

  /**
   * When an earlier apply of the same file dated its lines without a time, as the ledger holds
   * them: this upload's records are then the same, and count as already applied.
   */
  private async earlierApplyTime(upload: PointsUploadEntity): Promise<number | null> {
    const untimed = await this.lines
      .createQueryBuilder('l')
      .select(['l.line'])
      .where('l.upload_id = :id AND l.error IS NULL AND l.occurred_at IS NULL', { id: upload.id })
      .orderBy('l.line', 'ASC')
      .take(LEDGER_PROBES)
      .getMany();
    for (const { line } of untimed) {
      const event = await this.ledger.eventByKey(uploadLineKey(upload.contentSha256, line));
      if (event) return event.occurredAt;
    }
    return null;
  }

  /** A claimed upload found without lines: it expired, nothing was applied; so the page says. */
  private async releaseExpired(uploadId: string): Promise<never> {
    await this.uploads
      .createQueryBuilder()
      .update(PointsUploadEntity)
      .set({
        status: 'stopped',
        failure: EXPIRED_MIDWAY,
        expiredAt: () => 'COALESCE(expired_at, :now)',
      })
      .where('id = :id', { id: uploadId })
      .setParameter('now', Date.now())
      .execute();
    throw expired();
  }

  private validPart(uploadId: string, after: number): Promise<PointsUploadLineEntity[]> {
    return this.lines
      .createQueryBuilder('l')
      .where('l.upload_id = :uploadId AND l.error IS NULL AND l.line > :after', {
        uploadId,
        after,
      })
      .orderBy('l.line', 'ASC')
      .take(APPLY_PART)
      .getMany();
  }

  /**
   * Applies one part and counts its outcomes into `counts`; answers how many lines it went
   * through. Parts that committed when another failed are counted before the failure goes on.
   */
  private async applyPart(
    upload: PointsUploadEntity & { occurredAt: number },
    part: PointsUploadLineEntity[],
    counts: { applied: number; unchanged: number; refused: number },
  ): Promise<number> {
    const records = part.map((row): PointsRecord => ({
      type: 'points',
      key: uploadLineKey(upload.contentSha256, row.line),
      spaceId: upload.spaceId,
      address: row.address ?? '',
      points: row.points ?? 0,
      occurredAt: row.occurredAt ?? upload.occurredAt,
      reason: row.reason,
    }));
    let outcomes: ReadonlyArray<RecordOutcome | undefined>;
    let partly: BatchPartlyApplied | null = null;
    try {
      outcomes = await this.ingest.applyRecordsInParts(records, APPLY_WAYS, {
        spaceId: upload.spaceId,
      });
    } catch (error) {
      if (!(error instanceof BatchPartlyApplied)) throw error;
      outcomes = error.outcomes;
      partly = error;
    }
    const refusals: ListedLine[] = [];
    outcomes.forEach((outcome, i) => {
      if (!outcome) return;
      if (outcome.status === 'accepted') counts.applied++;
      else if (outcome.status === 'duplicate') counts.unchanged++;
      else {
        counts.refused++;
        refusals.push({ line: part[i].line, message: refusalMessage(outcome) });
      }
    });
    if (refusals.length > 0)
      await this.transactions.run((manager) => this.storeRefusals(manager, upload.id, refusals));
    if (partly !== null) throw partly;
    return part.length;
  }

  /** A part's refusals, one statement for each message and LINES_PER_STATEMENT lines. */
  private async storeRefusals(
    manager: EntityManager,
    uploadId: string,
    refusals: ListedLine[],
  ): Promise<void> {
    const byMessage = new Map<string, number[]>();
    for (const { line, message } of refusals) {
      const lines = byMessage.get(message);
      if (lines) lines.push(line);
      else byMessage.set(message, [line]);
    }
    for (const [message, lines] of byMessage)
      for (const some of chunk(lines, LINES_PER_STATEMENT))
        await manager
          .createQueryBuilder()
          .update(PointsUploadLineEntity)
          .set({ refusal: message })
          .where('upload_id = :uploadId AND line IN (:...some)', { uploadId, some })
          .execute();
  }

  private countColumns(counts: { applied: number; unchanged: number; refused: number }) {
    return {
      appliedCount: counts.applied,
      unchangedCount: counts.unchanged,
      refusedCount: counts.refused,
    };
  }

  /**
   * Drops the lines of the space's uploads beyond its KEPT_UPLOADS newest or older than
   * KEPT_UPLOAD_MS, and the summaries beyond KEPT_SUMMARIES. An upload is marked expired first,
   * in one statement that skips an apply under way (claim() takes only one not expired), and its
   * lines are dropped only when the mark took: an apply and an expiry never both have it.
   */
  private async expireOld(spaceId: number, now: number): Promise<void> {
    const kept = await this.uploads.find({
      select: { id: true, createdAt: true, expiredAt: true },
      where: { spaceId, expiredAt: IsNull() },
      order: { createdAt: 'DESC' },
    });
    const expiring = kept.filter((u, i) => i >= KEPT_UPLOADS || outlived(u, now));
    for (const upload of expiring) {
      const marked = await this.uploads
        .createQueryBuilder()
        .update(PointsUploadEntity)
        .set({ expiredAt: now })
        .where('id = :id AND expired_at IS NULL', { id: upload.id })
        .andWhere("(status <> 'applying' OR heartbeat_at IS NULL OR heartbeat_at < :stale)", {
          stale: now - STALE_APPLY_MS,
        })
        .execute();
      if (marked.affected === 1) await this.lines.delete({ uploadId: upload.id });
    }
    const forgotten = await this.uploads.find({
      select: { id: true },
      where: { spaceId, expiredAt: Not(IsNull()) },
      order: { createdAt: 'DESC' },
      skip: KEPT_SUMMARIES,
      take: 1_000,
    });
    if (forgotten.length > 0)
      await this.uploads.delete({ id: In(forgotten.map((upload) => upload.id)) });
  }
}

/** An upload older than KEPT_UPLOAD_MS whose lines are still kept: due to expire. */
function outlived(upload: Pick<PointsUploadEntity, 'createdAt' | 'expiredAt'>, now: number) {
  return upload.expiredAt === null && upload.createdAt < now - KEPT_UPLOAD_MS;
}

/** A line the ledger refused, as the page tells it. */
function refusalMessage(outcome: { field?: string; reason: string }): string {
  // The same line of the same file, applied before with another reason or time.
  const message =
    outcome.field === 'key'
      ? 'was applied before from this file with other values (another reason for every line?): nothing changed'
      : outcome.reason;
  return message.slice(0, MAX_LINE_MESSAGE);
}
