import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, In, Repository } from 'typeorm';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import type { SpaceRecord, SprintRecord } from '../ingest/ingest-record';
import { RecordOutcome, accepted, refused } from '../ingest/record-outcome';
import { SpaceEntity } from './space.entity';
import { SprintEntity } from './sprint.entity';

/** What a sprint upsert changed, so the caller can rebuild that sprint's board. */
export interface SprintChange {
  outcome: RecordOutcome;
  /** Set when the sprint is new or its window moved. */
  rebuild?: SprintEntity;
}

@Injectable()
export class SpacesService {
  constructor(
    @InjectRepository(SpaceEntity) private readonly spaces: Repository<SpaceEntity>,
    @InjectRepository(SprintEntity) private readonly sprints: Repository<SprintEntity>,
  ) {}

  findSpace(id: number): Promise<SpaceEntity | null> {
    return this.spaces.findOneBy({ id });
  }

  async requireSpace(id: number): Promise<SpaceEntity> {
    const space = await this.findSpace(id);
    if (!space) throw new LoyaltyException(ErrorCode.SPACE_NOT_FOUND);
    return space;
  }

  /** The sprint, which must belong to the space; anything else is `Invalid sprint ID`. */
  async requireSprint(spaceId: number, sprintId: number): Promise<SprintEntity> {
    const sprint = await this.sprints.findOneBy({ id: sprintId });
    if (!sprint || sprint.spaceId !== spaceId)
      throw new LoyaltyException(ErrorCode.INVALID_SPRINT_ID);
    return sprint;
  }

  listSprints(spaceId: number): Promise<SprintEntity[]> {
    return this.sprints.find({ where: { spaceId }, order: { startTime: 'ASC', id: 'ASC' } });
  }

  async existingSpaceIds(manager: EntityManager, ids: readonly number[]): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const rows = await manager
      .getRepository(SpaceEntity)
      .find({ select: { id: true }, where: { id: In([...ids]) } });
    return new Set(rows.map((row) => row.id));
  }

  sprintsOfSpaces(manager: EntityManager, spaceIds: readonly number[]): Promise<SprintEntity[]> {
    if (spaceIds.length === 0) return Promise.resolve([]);
    return manager.getRepository(SprintEntity).findBy({ spaceId: In([...spaceIds]) });
  }

  async upsertSpace(manager: EntityManager, record: SpaceRecord): Promise<RecordOutcome> {
    const repository = manager.getRepository(SpaceEntity);
    const existing = await repository.findOneBy({ id: record.id });
    if (!existing && record.name === undefined)
      return refused('name', 'is required for a new space');
    const space =
      existing ?? Object.assign(new SpaceEntity(), { id: record.id, description: null });
    if (record.name !== undefined) space.name = record.name;
    if (record.description !== undefined) space.description = record.description;
    await repository.save(space);
    return accepted();
  }

  async upsertSprint(manager: EntityManager, record: SprintRecord): Promise<SprintChange> {
    const repository = manager.getRepository(SprintEntity);
    const existing = await repository.findOneBy({ id: record.id });
    if (existing && record.spaceId !== undefined && record.spaceId !== existing.spaceId) {
      return {
        outcome: refused('spaceId', `sprint ${record.id} belongs to space ${existing.spaceId}`),
      };
    }
    if (!existing) {
      for (const field of ['spaceId', 'name', 'startTime', 'endTime'] as const) {
        if (record[field] === undefined)
          return { outcome: refused(field, 'is required for a new sprint') };
      }
    }
    const spaceId = existing?.spaceId ?? record.spaceId!;
    if (!existing && (await this.existingSpaceIds(manager, [spaceId])).size === 0) {
      return { outcome: refused('spaceId', `unknown space ${spaceId}`) };
    }
    const sprint = existing
      ? { ...existing }
      : Object.assign(new SprintEntity(), { id: record.id, spaceId });
    if (record.name !== undefined) sprint.name = record.name;
    if (record.startTime !== undefined) sprint.startTime = record.startTime;
    if (record.endTime !== undefined) sprint.endTime = record.endTime;
    if (sprint.endTime <= sprint.startTime)
      return { outcome: refused('endTime', 'must be after startTime') };
    await repository.save(Object.assign(new SprintEntity(), sprint));
    const moved =
      !existing || existing.startTime !== sprint.startTime || existing.endTime !== sprint.endTime;
    return {
      outcome: accepted(),
      rebuild: moved ? Object.assign(new SprintEntity(), sprint) : undefined,
    };
  }
}
