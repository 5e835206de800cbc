import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { addressKeyOf } from '../common/address-key';
import {
  PointsLedgerService,
  RangeCheck,
  TotalOutOfRange,
} from '../leaderboards/ledger/points-ledger.service';
import { RankIndexService } from '../leaderboards/rank-index/rank-index.service';
import { ProfilesService } from '../profiles/profiles.service';
import { QuestsService, unknownQuest } from '../quests/quests.service';
import { SpacesService } from '../spaces/spaces.service';
import { TransactionRunner } from '../storage/transactions/transaction-runner';
import type { IngestRecord, PointsRecord } from '../records/ingest-record';
import type { RecordOutcome } from '../records/record-outcome';
import { idOfAnotherSpace, outsideSpace, profileOutsideSpace, WriteScope } from './write-scope';

export interface IngestSummary {
  accepted: number;
  duplicates: number;
  refused: number;
}

/**
 * A batch applied in parts (see IngestService.applyRecordsInParts) of which some committed and
 * some failed. `outcomes` holds the committed parts' outcomes at their records' positions and
 * nothing at the failed parts' positions; `cause` is the first failure.
 */
export class BatchPartlyApplied extends Error {
  constructor(
    readonly outcomes: ReadonlyArray<RecordOutcome | undefined>,
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'BatchPartlyApplied';
  }
}

/**
 * Applies records in the order given, as one transaction per call: either every outcome it reports
 * is in the database or none is. Consecutive points records are applied in bulk. A writer limited
 * to one space (a space token, see WriteScope) has each record for another space refused.
 */
@Injectable()
export class IngestService {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly spaces: SpacesService,
    private readonly profiles: ProfilesService,
    private readonly quests: QuestsService,
    private readonly ledger: PointsLedgerService,
    private readonly rankIndexes: RankIndexService,
  ) {}

  /**
   * Once this answers, this instance's pages show the records; other instances' ranks within
   * 1 s, their profiles and spaces within 500 ms plus their response cache's age.
   */
  async applyRecords(
    records: readonly IngestRecord[],
    scope: WriteScope = {},
  ): Promise<RecordOutcome[]> {
    let outcomes: RecordOutcome[];
    try {
      outcomes = await this.transactions.run((manager) =>
        this.applyInTransaction(manager, records, 'optimistic', scope),
      );
    } catch (error) {
      if (!(error instanceof TotalOutOfRange)) throw error;
      // Rolled back: the unit runs again, refusing the records that would overflow.
      outcomes = await this.transactions.run((manager) =>
        this.applyInTransaction(manager, records, 'careful', scope),
      );
    }
    await this.rankIndexes.catchUp();
    return outcomes;
  }

  /**
   * For imports: applies points records as `ways` concurrent transactions, one per address range,
   * so MySQL/MariaDB works on one while this process prepares another. Each part is all-or-nothing,
   * the batch is not (BatchPartlyApplied says what committed): fine for an import, which re-runs.
   * A key sent with two addresses may land in two parts; which one wins is then not by order.
   * Other record types, and a single writer (SQLite), take applyRecords' one transaction.
   */
  async applyRecordsInParts(
    records: readonly IngestRecord[],
    ways: number,
    scope: WriteScope = {},
  ): Promise<RecordOutcome[]> {
    if (ways < 2 || this.transactions.singleWriter) return this.applyRecords(records, scope);
    const points = records.filter((record): record is PointsRecord => record.type === 'points');
    if (points.length < records.length) return this.applyRecords(records, scope);
    const parts = splitByAddressRange(points, ways).filter((part) => part.records.length > 0);
    // Every part settles before a failure is reported: none is left running behind the caller.
    const settled = await Promise.allSettled(
      parts.map((part) => this.applyRecords(part.records, scope)),
    );
    const outcomes = new Array<RecordOutcome>(records.length);
    let failure: PromiseRejectedResult | undefined;
    parts.forEach((part, p) => {
      const result = settled[p];
      if (result.status === 'rejected') failure ??= result;
      else part.positions.forEach((at, i) => (outcomes[at] = result.value[i]));
    });
    if (failure) {
      if (settled.every((result) => result.status === 'rejected')) throw failure.reason;
      throw new BatchPartlyApplied(outcomes, failure.reason);
    }
    return outcomes;
  }

  private async applyInTransaction(
    manager: EntityManager,
    records: readonly IngestRecord[],
    rangeCheck: RangeCheck,
    scope: WriteScope,
  ): Promise<RecordOutcome[]> {
    const outcomes = new Array<RecordOutcome>(records.length);
    let points: PointsRecord[] = [];
    let positions: number[] = [];
    const flushPoints = async () => {
      if (points.length === 0) return;
      const applied = await this.ledger.ingestPoints(manager, points, rangeCheck);
      positions.forEach((at, i) => (outcomes[at] = applied[i]));
      points = [];
      positions = [];
    };
    const own = scope.spaceId ?? null;
    for (const [at, record] of records.entries()) {
      if (own !== null) {
        const refusal = await this.outsideOwnSpace(manager, record, own);
        if (refusal) {
          outcomes[at] = refusal;
          continue;
        }
      }
      if (record.type === 'points') {
        points.push(record);
        positions.push(at);
        continue;
      }
      await flushPoints();
      outcomes[at] = await this.applyOne(manager, record);
    }
    await flushPoints();
    return outcomes;
  }

  /**
   * The refusal of a record that would write outside the space `own`, or undefined. A record that
   * names another space in its own fields is refused naming it (it said so itself). What is stored
   * in another space is never named: a sprint or quest id stored there (it belongs to its space for
   * good) is refused as taken by "another space", and a participation in a quest of another space
   * is refused exactly as one in an unknown quest, so a private space's quests stay unseen.
   */
  private async outsideOwnSpace(
    manager: EntityManager,
    record: IngestRecord,
    own: number,
  ): Promise<RecordOutcome | undefined> {
    const named = (field: string, target: number | undefined) =>
      target !== undefined && target !== own ? outsideSpace(field, own, target) : undefined;
    const elsewhere = (stored: number | null) => stored !== null && stored !== own;
    switch (record.type) {
      case 'points':
        return named('spaceId', record.spaceId);
      case 'space':
        return named('id', record.id);
      case 'sprint':
        return (
          named('spaceId', record.spaceId) ??
          (elsewhere(await this.spaces.spaceOfSprint(manager, record.id))
            ? idOfAnotherSpace(record.id)
            : undefined)
        );
      case 'quest':
        return (
          named('spaceId', record.spaceId) ??
          (elsewhere(await this.quests.spaceOfQuest(manager, record.id))
            ? idOfAnotherSpace(record.id)
            : undefined)
        );
      case 'participation': {
        // Unknown, or another space's: one answer after the same one read, so neither the
        // reason nor the work tells them apart.
        const stored = await this.quests.spaceOfQuest(manager, record.questId);
        return stored === own ? undefined : unknownQuest(record.questId);
      }
      case 'profile':
        return profileOutsideSpace(own);
    }
  }

  private async applyOne(
    manager: EntityManager,
    record: Exclude<IngestRecord, PointsRecord>,
  ): Promise<RecordOutcome> {
    switch (record.type) {
      case 'space':
        return this.spaces.upsertSpace(manager, record);
      case 'sprint': {
        const change = await this.spaces.upsertSprint(manager, record);
        if (change.rebuild) await this.ledger.rebuildSprintBoard(manager, change.rebuild);
        return change.outcome;
      }
      case 'profile':
        return this.profiles.upsertProfile(manager, record);
      case 'quest':
        return this.quests.upsertQuest(manager, record);
      case 'participation':
        return this.quests.addParticipation(manager, record);
    }
  }
}

export function summarize(
  outcomes: readonly RecordOutcome[],
  into: IngestSummary = { accepted: 0, duplicates: 0, refused: 0 },
): IngestSummary {
  for (const outcome of outcomes) {
    if (outcome.status === 'accepted') into.accepted++;
    else if (outcome.status === 'duplicate') into.duplicates++;
    else into.refused++;
  }
  return into;
}

/**
 * Splits points records into `ways` parts of about as many addresses each, by address key: the
 * parts' board rows (keyed by address) lie in separate ranges of every board. Their transactions
 * still meet on each board's counter row (written last, see PointsLedgerService.addEvents), on a
 * key sent in both, and at the ranges' edge.
 */
function splitByAddressRange(
  records: readonly PointsRecord[],
  ways: number,
): Array<{ records: PointsRecord[]; positions: number[] }> {
  const keys = records.map((record) => addressKeyOf(record.address));
  const distinct = [...new Set(keys)].sort();
  const bounds = Array.from(
    { length: ways - 1 },
    (_, i) => distinct[Math.floor(((i + 1) * distinct.length) / ways)],
  );
  const parts = Array.from({ length: ways }, () => ({
    records: [] as PointsRecord[],
    positions: [] as number[],
  }));
  keys.forEach((key, at) => {
    let part = 0;
    while (part < bounds.length && key >= bounds[part]) part++;
    parts[part].records.push(records[at]);
    parts[part].positions.push(at);
  });
  return parts;
}
