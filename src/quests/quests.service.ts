import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { addressKeyOf } from '../common/address-key';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import type { ParticipationRecord, QuestRecord } from '../records/ingest-record';
import { RecordOutcome, accepted, refused } from '../records/record-outcome';
import { ProfilesService } from '../profiles/profiles.service';
import { canReadSpace, SpaceReader } from '../spaces/space-reader';
import { SpacesService } from '../spaces/spaces.service';
import { num, SqlDialect } from '../storage/dialect/sql-dialect';
import { InjectSqlDialect } from '../storage/sql-dialect.provider';
import { CampaignPage, listCampaigns, refuseUnsupported } from './campaigns/campaign-list';
import type { ListCampaignInput } from './campaigns/list-campaign.input';
import { EntityRows } from '../storage/schema/entity-rows';
import { QuestEntity } from './quest.entity';
import { execute, query } from '../storage/statements';

@Injectable()
export class QuestsService {
  /** Quests read by plain SQL, through the entity's columns. */
  private readonly questRows: EntityRows<QuestEntity>;

  constructor(
    @InjectRepository(QuestEntity) private readonly quests: Repository<QuestEntity>,
    private readonly spaces: SpacesService,
    private readonly profiles: ProfilesService,
    @InjectSqlDialect() private readonly dialect: SqlDialect,
  ) {
    this.questRows = new EntityRows(quests);
  }

  /**
   * Any quest, Deleted ones included; an unknown id is `Quest not found`, and so is a quest of a
   * private space that `reader` may not read (one query either way, its space's flag joined in).
   * `reader` absent: the service's own read, which sees every quest.
   */
  async requireQuest(id: string, reader?: SpaceReader | null): Promise<QuestEntity> {
    const [row]: Array<Record<string, unknown>> = await query(
      this.quests.manager,
      `SELECT ${this.questRows.columns('q')}, s.is_private AS spacePrivate
         FROM quests q LEFT JOIN spaces s ON s.id = q.space_id
        WHERE q.id = ?`,
      [id],
    );
    if (!row) throw new LoyaltyException(ErrorCode.QUEST_NOT_FOUND);
    const quest = this.questRows.entity(row);
    const space = { id: quest.spaceId, isPrivate: Number(row.spacePrivate) === 1 };
    if (reader !== undefined && !canReadSpace(reader, space))
      throw new LoyaltyException(ErrorCode.QUEST_NOT_FOUND);
    return quest;
  }

  /** The space of a stored quest (a quest never moves), or null when there is none. */
  async spaceOfQuest(manager: EntityManager, questId: string): Promise<number | null> {
    const [row]: Array<{ spaceId: unknown }> = await query(
      manager,
      'SELECT space_id AS spaceId FROM quests WHERE id = ?',
      [questId],
    );
    return row ? num(row.spaceId) : null;
  }

  /**
   * Every quest of the space, in no order, by plain SQL (the campaign lists filter, sort and page
   * them in memory: about 25 ms for a space of 10,000 quests, see docs/galxe-compatibility.md).
   */
  async questsOfSpace(spaceId: number): Promise<QuestEntity[]> {
    const rows: Array<Record<string, unknown>> = await query(
      this.quests.manager,
      `SELECT ${this.questRows.columns()} FROM quests WHERE space_id = ?`,
      [spaceId],
    );
    return rows.map((row) => this.questRows.entity(row));
  }

  /** The page of the space's quests a Galxe campaign list asks for (see listCampaigns). */
  async campaignPage(
    spaceId: number,
    input: Partial<ListCampaignInput>,
  ): Promise<CampaignPage<QuestEntity>> {
    refuseUnsupported(input);
    return listCampaigns(await this.questsOfSpace(spaceId), input);
  }

  listQuests(spaceId: number): Promise<QuestEntity[]> {
    return this.quests.find({ where: { spaceId }, order: { name: 'ASC', id: 'ASC' } });
  }

  async upsertQuest(manager: EntityManager, record: QuestRecord): Promise<RecordOutcome> {
    const repository = manager.getRepository(QuestEntity);
    const existing = await repository.findOneBy({ id: record.id });
    if (existing && record.spaceId !== undefined && record.spaceId !== existing.spaceId) {
      return refused('spaceId', `quest ${record.id} belongs to space ${existing.spaceId}`);
    }
    if (!existing) {
      for (const field of ['spaceId', 'name', 'status'] as const) {
        if (record[field] === undefined) return refused(field, 'is required for a new quest');
      }
      const known = await this.spaces.existingSpaceIds(manager, [record.spaceId as number]);
      if (known.size === 0) return refused('spaceId', `unknown space ${record.spaceId}`);
    }
    const quest =
      existing ??
      Object.assign(new QuestEntity(), {
        id: record.id,
        spaceId: record.spaceId,
        type: null,
        startTime: null,
        endTime: null,
        cap: null,
        participantsCount: 0,
      });
    if (record.name !== undefined) quest.name = record.name;
    if (record.status !== undefined) quest.status = record.status;
    if (record.questType !== undefined) quest.type = record.questType;
    if (record.startTime !== undefined) quest.startTime = record.startTime;
    if (record.endTime !== undefined) quest.endTime = record.endTime;
    if (record.cap !== undefined) quest.cap = record.cap;
    if (quest.startTime !== null && quest.endTime !== null && quest.endTime <= quest.startTime) {
      return refused('endTime', 'must be after startTime');
    }
    // A new quest is inserted, never saved: save() would update a quest another writer inserted
    // since, moving it into this record's space. A duplicate id re-runs the unit, which sees it.
    if (existing) await repository.save(quest);
    else await repository.insert(quest);
    return accepted();
  }

  /** Joining twice counts once; the count moves in the same transaction as the row. */
  async addParticipation(
    manager: EntityManager,
    record: ParticipationRecord,
  ): Promise<RecordOutcome> {
    const exists = await manager
      .getRepository(QuestEntity)
      .exists({ where: { id: record.questId } });
    if (!exists) return unknownQuest(record.questId);
    const addressKey = addressKeyOf(record.address);
    const inserted = await execute(
      manager,
      this.dialect.insertIgnore('quest_participants', ['quest_id', 'address_key'], 1),
      [record.questId, addressKey],
    );
    if (inserted > 0) {
      await manager.increment(QuestEntity, { id: record.questId }, 'participantsCount', 1);
    }
    await this.profiles.rememberAddresses(manager, [record.address]);
    return accepted();
  }
}

/**
 * The refusal of a participation in a quest that is not there. A space token's participation in
 * another space's quest gets exactly this too (see IngestService), so the two cannot be told apart.
 */
export function unknownQuest(questId: string): RecordOutcome {
  return refused('questId', `unknown quest ${questId}`);
}
