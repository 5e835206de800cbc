import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  PointsLedgerService,
  RangeCheck,
  TotalOutOfRange,
} from '../leaderboards/points-ledger.service';
import { RankIndexService } from '../leaderboards/rank-index/rank-index.service';
import { ProfilesService } from '../profiles/profiles.service';
import { QuestsService } from '../quests/quests.service';
import { SpacesService } from '../spaces/spaces.service';
import { TransactionRunner } from '../storage/transaction-runner';
import type { IngestRecord, PointsRecord } from './ingest-record';
import type { RecordOutcome } from './record-outcome';

export interface IngestSummary {
  accepted: number;
  duplicates: number;
  refused: number;
}

/**
 * Applies records in the order given, as one transaction per call: either every outcome it reports
 * is in the database or none is. Consecutive points records are applied in bulk.
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
   * 1 s, their profiles within 500 ms plus their response cache's age.
   */
  async applyRecords(records: readonly IngestRecord[]): Promise<RecordOutcome[]> {
    let outcomes: RecordOutcome[];
    try {
      outcomes = await this.transactions.run((manager) =>
        this.applyInTransaction(manager, records, 'optimistic'),
      );
    } catch (error) {
      if (!(error instanceof TotalOutOfRange)) throw error;
      // Rolled back: the unit runs again, refusing the records that would overflow.
      outcomes = await this.transactions.run((manager) =>
        this.applyInTransaction(manager, records, 'careful'),
      );
    }
    await this.rankIndexes.catchUp();
    return outcomes;
  }

  private async applyInTransaction(
    manager: EntityManager,
    records: readonly IngestRecord[],
    rangeCheck: RangeCheck,
  ): Promise<RecordOutcome[]> {
    const outcomes: RecordOutcome[] = [];
    let points: PointsRecord[] = [];
    const flushPoints = async () => {
      if (points.length === 0) return;
      // Not push(...): a batch of a few hundred thousand records would overflow the stack.
      for (const outcome of await this.ledger.ingestPoints(manager, points, rangeCheck))
        outcomes.push(outcome);
      points = [];
    };
    for (const record of records) {
      if (record.type === 'points') {
        points.push(record);
        continue;
      }
      await flushPoints();
      outcomes.push(await this.applyOne(manager, record));
    }
    await flushPoints();
    return outcomes;
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
