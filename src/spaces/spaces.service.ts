import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { performance } from 'node:perf_hooks';
import { EntityManager, LessThan, MoreThan, Repository } from 'typeorm';
import { ErrorCode } from '../common/errors/error-code';
import { LoyaltyException } from '../common/errors/loyalty.exception';
import { SingleFlight } from '../common/single-flight';
import { isSpaceAlias, type SpaceRecord, type SprintRecord } from '../records/ingest-record';
import { RecordOutcome, accepted, refused } from '../records/record-outcome';
import { num, SqlDialect } from '../storage/dialect/sql-dialect';
import { InjectSqlDialect } from '../storage/sql-dialect.provider';
import { EntityRows } from '../storage/schema/entity-rows';
import { afterCommit } from '../storage/transactions/transaction-runner';
import { SpaceEntity } from './space.entity';
import { canReadSpace, SpaceReader } from './space-reader';
import { SprintEntity } from './sprint.entity';
import { query } from '../storage/statements';

/**
 * Spaces read for requests (requireSpace) are reused this long: a change made through another
 * instance shows within it (plus the response cache's age); one made through this instance shows
 * at once.
 */
const READ_SPACE_TTL_MS = 500;
const READ_SPACE_LIMIT = 10_000;

/** What a sprint upsert changed, so the caller can rebuild that sprint's board. */
export interface SprintChange {
  outcome: RecordOutcome;
  /** Set when the sprint is new or its window moved. */
  rebuild?: SprintEntity;
}

@Injectable()
export class SpacesService {
  private readonly visibilityListeners: Array<(spaceId: number) => void> = [];
  /** Spaces (or their absence) recently read for requests, until when they may be served. */
  private readonly recent = new Map<number, { space: SpaceEntity | null; until: number }>();
  /** Moves on every space write this instance makes: reads begun before it are not kept. */
  private writes = 0;
  /** Reads of a space that requests share (many miss together when an entry expires). */
  private readonly reads = new SingleFlight<number, SpaceEntity | null>();

  /** Spaces and sprints read by plain SQL, through their entities' columns. */
  private readonly spaceRows: EntityRows<SpaceEntity>;
  private readonly sprintRows: EntityRows<SprintEntity>;

  constructor(
    @InjectRepository(SpaceEntity) private readonly spaces: Repository<SpaceEntity>,
    @InjectRepository(SprintEntity) private readonly sprints: Repository<SprintEntity>,
    @InjectSqlDialect() private readonly dialect: SqlDialect,
  ) {
    this.spaceRows = new EntityRows(spaces);
    this.sprintRows = new EntityRows(sprints);
  }

  listSpaces(): Promise<SpaceEntity[]> {
    return this.spaces.find({ order: { id: 'ASC' } });
  }

  /** On every leaderboard request: plain SQL, not a query TypeORM builds each time. */
  findSpace(id: number): Promise<SpaceEntity | null> {
    return this.findSpaceWhere('id = ?', id);
  }

  /**
   * The space with this alias, whatever its letter case (aliases are stored in lower case); null
   * when none has it.
   */
  async findSpaceByAlias(alias: string): Promise<SpaceEntity | null> {
    const key = alias.toLowerCase();
    // Not an alias any record could set: none has it, on either database (MariaDB's collation
    // would otherwise ignore trailing spaces where SQLite does not).
    if (!isSpaceAlias(key)) return null;
    return this.findSpaceWhere('alias = ?', key);
  }

  private async findSpaceWhere(where: string, value: unknown): Promise<SpaceEntity | null> {
    const [row] = await query(
      this.spaces.manager,
      `SELECT ${this.spaceRows.columns()} FROM spaces WHERE ${where}`,
      [value],
    );
    return row ? this.spaceRows.entity(row) : null;
  }

  /**
   * The space, as `reader` may see it: a private space that `reader` may not read is `Space not
   * found`, exactly as one that does not exist (the same single query either way). `reader`
   * absent: the service's own read (export, the CLI), which sees every space.
   */
  async requireSpace(id: number, reader?: SpaceReader | null): Promise<SpaceEntity> {
    const space = await this.readSpace(id);
    if (!space || (reader !== undefined && !canReadSpace(reader, space)))
      throw new LoyaltyException(ErrorCode.SPACE_NOT_FOUND);
    return space;
  }

  /**
   * The space of that alias as `reader` may see it, as {@link requireSpace} by id: an unknown
   * alias and a private space `reader` may not read are both `Space not found`.
   */
  async requireSpaceByAlias(alias: string, reader: SpaceReader | null): Promise<SpaceEntity> {
    const space = await this.findSpaceByAlias(alias);
    if (!space || !canReadSpace(reader, space))
      throw new LoyaltyException(ErrorCode.SPACE_NOT_FOUND);
    return space;
  }

  /** findSpace through a short-lived cache (READ_SPACE_TTL_MS). Served objects are shared. */
  private async readSpace(id: number): Promise<SpaceEntity | null> {
    const now = performance.now();
    const hit = this.recent.get(id);
    if (hit && hit.until > now) return hit.space;
    const writes = this.writes;
    const space = await this.reads.run(id, writes, () => this.findSpace(id));
    // A write made meanwhile may not be in what was read: serve it, keep none of it.
    if (writes === this.writes) {
      this.recent.delete(id);
      if (this.recent.size >= READ_SPACE_LIMIT)
        this.recent.delete(this.recent.keys().next().value!);
      this.recent.set(id, { space, until: now + READ_SPACE_TTL_MS });
    }
    return space;
  }

  /** After this instance changes a space: requests read it again. */
  private forgetSpace(id: number): void {
    this.writes++;
    this.recent.delete(id);
  }

  /**
   * Makes a space private (read only by its own tokens and deployment tokens) or public again.
   * False when the space does not exist.
   */
  async setPrivate(spaceId: number, isPrivate: boolean): Promise<boolean> {
    const result = await this.spaces.update({ id: spaceId }, { isPrivate });
    this.forgetSpace(spaceId);
    const found = (result.affected ?? 0) > 0 || (await this.spaces.existsBy({ id: spaceId }));
    if (found) for (const listener of this.visibilityListeners) listener(spaceId);
    return found;
  }

  /** Called after this instance changes who may read a space (response caches start again). */
  onVisibilityChange(listener: (spaceId: number) => void): void {
    this.visibilityListeners.push(listener);
  }

  /** The sprint, which must belong to the space; anything else is `Invalid sprint ID`. */
  async requireSprint(spaceId: number, sprintId: number): Promise<SprintEntity> {
    const sprint = await this.sprints.findOneBy({ id: sprintId });
    if (!sprint || sprint.spaceId !== spaceId)
      throw new LoyaltyException(ErrorCode.INVALID_SPRINT_ID);
    return sprint;
  }

  /** The space of a stored sprint (a sprint never moves), or null when there is none. */
  async spaceOfSprint(manager: EntityManager, sprintId: number): Promise<number | null> {
    const [row]: Array<{ spaceId: unknown }> = await query(
      manager,
      'SELECT space_id AS spaceId FROM sprints WHERE id = ?',
      [sprintId],
    );
    return row ? num(row.spaceId) : null;
  }

  listSprints(spaceId: number): Promise<SprintEntity[]> {
    return this.sprints.find({ where: { spaceId }, order: { startTime: 'ASC', id: 'ASC' } });
  }

  /** A sprint by id, whichever space it belongs to; null when there is none. */
  findSprint(sprintId: number): Promise<SprintEntity | null> {
    return this.sprints.findOneBy({ id: sprintId });
  }

  /**
   * The sprints of the space whose window [start, end) shares a moment with [startTime, endTime),
   * by start time, leaving out `exceptId` (the sprint being moved). Windows that only touch (one
   * ends when the other starts) do not overlap: an event counts for one of them only.
   */
  async overlappingSprints(
    spaceId: number,
    startTime: number,
    endTime: number,
    exceptId?: number,
  ): Promise<SprintEntity[]> {
    const found = await this.sprints.find({
      where: { spaceId, startTime: LessThan(endTime), endTime: MoreThan(startTime) },
      order: { startTime: 'ASC', id: 'ASC' },
    });
    return found.filter((sprint) => sprint.id !== exceptId);
  }

  /** One more than the greatest space id (1 for none): what a form proposes for a new space. */
  nextSpaceId(): Promise<number> {
    return this.nextId('spaces');
  }

  /** One more than the greatest sprint id of every space: sprint ids are shared by all of them. */
  nextSprintId(): Promise<number> {
    return this.nextId('sprints');
  }

  private async nextId(table: 'spaces' | 'sprints'): Promise<number> {
    const [row]: Array<{ id: unknown }> = await query(
      this.spaces.manager,
      `SELECT MAX(id) AS id FROM ${table}`,
    );
    return row?.id === null || row?.id === undefined ? 1 : num(row.id) + 1;
  }

  async existingSpaceIds(manager: EntityManager, ids: readonly number[]): Promise<Set<number>> {
    return this.lockSpaces(manager, ids, 'none');
  }

  /**
   * The ids that exist among `ids`, read with a lock where writers lock rows: 'shared' for writers
   * of points (many at once), 'exclusive' for a sprint change, which must see and be seen by all.
   */
  async lockSpaces(
    manager: EntityManager,
    ids: readonly number[],
    lock: 'none' | 'shared' | 'exclusive',
  ): Promise<Set<number>> {
    if (ids.length === 0) return new Set();
    const suffix =
      lock === 'none' ? '' : this.dialect.lockRows(lock === 'shared' ? 'share' : 'update');
    const rows: Array<{ id: unknown }> = await query(
      manager,
      `SELECT id FROM spaces WHERE id IN (${ids.map(() => '?').join(', ')}) ORDER BY id${suffix}`,
      [...ids],
    );
    return new Set(rows.map((row) => num(row.id)));
  }

  /** The sprints of these spaces, as last committed (a locking read where writers lock rows). */
  async sprintsOfSpaces(
    manager: EntityManager,
    spaceIds: readonly number[],
  ): Promise<SprintEntity[]> {
    if (spaceIds.length === 0) return [];
    const rows = await query(
      manager,
      `SELECT ${this.sprintRows.columns()} FROM sprints
       WHERE space_id IN (${spaceIds.map(() => '?').join(', ')})${this.dialect.lockRows('share')}`,
      [...spaceIds],
    );
    return rows.map((row) => this.sprintRows.entity(row));
  }

  async upsertSpace(manager: EntityManager, record: SpaceRecord): Promise<RecordOutcome> {
    const repository = manager.getRepository(SpaceEntity);
    const existing = await repository.findOneBy({ id: record.id });
    if (!existing && record.name === undefined)
      return refused('name', 'is required for a new space');
    if (record.alias !== undefined && record.alias !== null) {
      const holder = await this.spaceWithAlias(manager, record.alias);
      // The other space is not named: it may be private.
      if (holder !== null && holder !== record.id)
        return refused('alias', `"${record.alias}" is taken by another space`);
    }
    const space =
      existing ??
      Object.assign(new SpaceEntity(), { id: record.id, description: null, alias: null });
    if (record.name !== undefined) space.name = record.name;
    if (record.description !== undefined) space.description = record.description;
    if (record.alias !== undefined) space.alias = record.alias;
    await repository.save(space);
    afterCommit(manager, () => this.forgetSpace(space.id));
    return accepted();
  }

  /**
   * The space holding `alias`, read in the writer's transaction, or null. Two writers claiming one
   * alias at once both see it free; the unique index then fails the later one's unit, which runs
   * again (a duplicate key is retried, see retry-policy) and is refused here.
   */
  private async spaceWithAlias(manager: EntityManager, alias: string): Promise<number | null> {
    const [row]: Array<{ id: unknown }> = await query(
      manager,
      'SELECT id FROM spaces WHERE alias = ?',
      [alias],
    );
    return row ? num(row.id) : null;
  }

  async upsertSprint(manager: EntityManager, record: SprintRecord): Promise<SprintChange> {
    const repository = manager.getRepository(SprintEntity);
    // A sprint never changes space, so an unlocked look tells which space to lock first.
    const known = await repository.findOneBy({ id: record.id });
    if (known && record.spaceId !== undefined && record.spaceId !== known.spaceId) {
      return {
        outcome: refused('spaceId', `sprint ${record.id} belongs to space ${known.spaceId}`),
      };
    }
    const spaceId = known?.spaceId ?? record.spaceId;
    if (spaceId === undefined)
      return { outcome: refused('spaceId', 'is required for a new sprint') };
    if ((await this.lockSpaces(manager, [spaceId], 'exclusive')).size === 0) {
      return { outcome: refused('spaceId', `unknown space ${spaceId}`) };
    }
    const existing = this.dialect.rowLocks
      ? await repository.findOne({
          where: { id: record.id },
          lock: { mode: 'pessimistic_write' },
        })
      : known;
    // Created meanwhile in another space (between the unlocked look and the lock): never updated
    // from here, and that space is not named (it may be private).
    if (existing && existing.spaceId !== spaceId) {
      return { outcome: refused('id', `${record.id} is already used by another space`) };
    }
    if (!existing) {
      for (const field of ['name', 'startTime', 'endTime'] as const) {
        if (record[field] === undefined)
          return { outcome: refused(field, 'is required for a new sprint') };
      }
    }
    const sprint = Object.assign(new SprintEntity(), existing ?? { id: record.id, spaceId });
    if (record.name !== undefined) sprint.name = record.name;
    if (record.startTime !== undefined) sprint.startTime = record.startTime;
    if (record.endTime !== undefined) sprint.endTime = record.endTime;
    if (sprint.endTime <= sprint.startTime)
      return { outcome: refused('endTime', 'must be after startTime') };
    // A new sprint is inserted, never saved: save() would update a row another writer inserted
    // since, whatever its space. A duplicate id re-runs the unit, which then sees that row.
    if (existing) await repository.save(sprint);
    else await repository.insert(sprint);
    const moved =
      !existing || existing.startTime !== sprint.startTime || existing.endTime !== sprint.endTime;
    return { outcome: accepted(), rebuild: moved ? sprint : undefined };
  }
}
