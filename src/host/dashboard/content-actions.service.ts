import { Injectable } from '@nestjs/common';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { IngestService } from '../../ingest/ingest.service';
import type { QuestEntity } from '../../quests/quest.entity';
import { QuestsService } from '../../quests/quests.service';
import { MAX_INT_ID, parseRecord } from '../../records/ingest-record';
import { QUEST_STATUSES } from '../../records/quest-status.enum';
import type { SpaceEntity } from '../../spaces/space.entity';
import { SpacesService } from '../../spaces/spaces.service';
import type { SprintEntity } from '../../spaces/sprint.entity';
import type { DashboardSession } from './accounts/sessions.service';
import { AuditAction, auditActor, AuditEvent, AuditService } from './audit/audit.service';
import { parseUtcInput, UtcTime, utcText } from './forms/utc-form-time';

/** The space form as sent: strings as typed; the id only when creating. */
export interface SpaceForm {
  id: string;
  name: string;
  description: string;
  /** As typed; empty removes it; absent (a form without the field) keeps the stored one. */
  alias?: string;
}

/** The sprint form as sent; `allowOverlap` is the "Allow overlapping sprints" box. */
export interface SprintForm {
  id: string;
  name: string;
  start: string;
  end: string;
  allowOverlap: boolean;
}

/** The quest form as sent; type, start, end and cap may be left empty. */
export interface QuestForm {
  id: string;
  name: string;
  status: string;
  type: string;
  start: string;
  end: string;
  cap: string;
}

/**
 * A content form refused: the message a page shows, and the form field it is about (the page
 * marks that field). INVALID_ARGUMENT answers 400, ALREADY_EXISTS 409 (see refusalOf).
 */
export class ContentFormRefusal extends LoyaltyException {
  constructor(
    message: string,
    readonly field?: string,
    code: ErrorCode.INVALID_ARGUMENT | ErrorCode.ALREADY_EXISTS = ErrorCode.INVALID_ARGUMENT,
  ) {
    super(code, message);
  }
}

/** Each record field a content form fills: the form field that holds it, and its label. */
const FORM_FIELDS: Record<string, { field: string; label: string }> = {
  id: { field: 'id', label: 'Id' },
  name: { field: 'name', label: 'Name' },
  description: { field: 'description', label: 'Description' },
  alias: { field: 'alias', label: 'Alias' },
  startTime: { field: 'start', label: 'Start' },
  endTime: { field: 'end', label: 'End' },
  status: { field: 'status', label: 'Status' },
  questType: { field: 'type', label: 'Type' },
  cap: { field: 'cap', label: 'Cap' },
};

/**
 * A refusal of parseRecord or of ingestion ("questType must be at most 64 characters") as the
 * form says it: the record's field name becomes the form's label.
 */
function formRefusal(reason: string, recordField?: string): ContentFormRefusal {
  const known = recordField === undefined ? undefined : FORM_FIELDS[recordField];
  if (recordField === undefined || known === undefined) return new ContentFormRefusal(reason);
  const message = reason.startsWith(`${recordField} `)
    ? `${known.label}${reason.slice(recordField.length)}`
    : reason;
  return new ContentFormRefusal(message, known.field);
}

/** A form's date and time, read as UTC; `label` names the field in the refusal. */
function utcTime(value: string, field: string, label: string): UtcTime {
  const time = parseUtcInput(value);
  if (time === null) {
    throw new ContentFormRefusal(
      `${label} must be a date and time in UTC, such as 2026-01-31 12:00`,
      field,
    );
  }
  return time;
}

/** A positive integer id as typed; ingestion's limit is MAX_INT_ID. */
function numericId(value: string, label: string): number {
  const id = /^\d{1,10}$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!(id >= 1 && id <= MAX_INT_ID))
    throw new ContentFormRefusal(`${label} must be a whole number from 1 to ${MAX_INT_ID}`, 'id');
  return id;
}

/**
 * The alias a space form sets: lower-cased as typed (aliases are), null when left empty, undefined
 * from a form without the field.
 */
function aliasOf(form: SpaceForm): string | null | undefined {
  if (form.alias === undefined) return undefined;
  return form.alias.trim().toLowerCase() || null;
}

/** A sprint as messages and the audit trail name it. */
const sprintLabel = (sprint: { id: number; name: string }) => `“${sprint.name}” (#${sprint.id})`;
/** Descriptions may be long; an audit entry's detail keeps 1,000 characters of JSON. */
const clipped = (text: string | null) =>
  text !== null && text.length > 200 ? `${text.slice(0, 199)}…` : text;

/**
 * Creating and editing spaces, sprints and quests from the dashboard's forms: each form becomes the
 * record ingestion takes, checked by parseRecord and applied by IngestService in the space's write
 * scope, so the pages accept exactly what `POST /ingest` accepts. What ingestion would take as an
 * update (an id that exists) is refused when the form creates; windows overlapping another sprint
 * are refused unless the form allows them. Every change is audited. The caller has checked the
 * account's access to the space (DashboardViews.pageSpace, operators for a new space).
 *
 * Those two checks read before the write, outside its transaction (IngestService owns it): two
 * admins saving the same new id, or overlapping windows, at the same moment may both pass. Either
 * way the data stays what ingestion allows; the check is the forms' courtesy, not an invariant.
 */
@Injectable()
export class ContentActions {
  constructor(
    private readonly spaces: SpacesService,
    private readonly quests: QuestsService,
    private readonly ingest: IngestService,
    private readonly audit: AuditService,
  ) {}

  /** The id a new space form proposes: the next one free, at the time the form is shown. */
  async proposedSpaceId(): Promise<number | null> {
    const next = await this.spaces.nextSpaceId();
    return next <= MAX_INT_ID ? next : null;
  }

  /** The id a new sprint form proposes; sprint ids are shared by every space. */
  async proposedSprintId(): Promise<number | null> {
    const next = await this.spaces.nextSprintId();
    return next <= MAX_INT_ID ? next : null;
  }

  /** The sprint of that id in the space; null for one of another space or none. */
  async findSprint(spaceId: number, sprintId: string): Promise<SprintEntity | null> {
    if (!/^\d{1,10}$/.test(sprintId)) return null;
    const sprint = await this.spaces.findSprint(Number(sprintId));
    return sprint?.spaceId === spaceId ? sprint : null;
  }

  /** The quest of that id in the space, Deleted ones included; null for another space's or none. */
  async findQuest(spaceId: number, questId: string): Promise<QuestEntity | null> {
    const quest = await this.findQuestAnywhere(questId);
    return quest?.spaceId === spaceId ? quest : null;
  }

  /** Answers the new space's id. An id already taken is refused, never updated. */
  async createSpace(session: DashboardSession, form: SpaceForm, address: string): Promise<number> {
    const id = numericId(form.id, 'Space id');
    const taken = await this.spaces.findSpace(id);
    if (taken) {
      throw new ContentFormRefusal(
        `Space ${id} exists already (“${taken.name}”): choose another id.`,
        'id',
        ErrorCode.ALREADY_EXISTS,
      );
    }
    const description = form.description.trim();
    const name = form.name.trim();
    const alias = aliasOf(form);
    await this.apply(id, {
      type: 'space',
      id,
      name,
      ...(description === '' ? {} : { description }),
      ...(alias ? { alias } : {}),
    });
    await this.record(session, address, 'space.create', id, name, {
      id,
      name,
      description: clipped(description || null),
      ...(alias ? { alias } : {}),
    });
    return id;
  }

  /** A description or an alias left empty clears it. */
  async updateSpace(
    session: DashboardSession,
    space: SpaceEntity,
    form: SpaceForm,
    address: string,
  ): Promise<void> {
    const name = form.name.trim();
    const description = form.description.trim() || null;
    const alias = aliasOf(form);
    await this.apply(space.id, {
      type: 'space',
      id: space.id,
      name,
      description,
      ...(alias === undefined ? {} : { alias }),
    });
    await this.record(session, address, 'space.update', space.id, name, {
      id: space.id,
      name,
      description: clipped(description),
      ...(name === space.name ? {} : { previousName: space.name }),
      ...(alias === undefined || alias === space.alias
        ? {}
        : { alias, previousAlias: space.alias }),
    });
  }

  /** Answers the new sprint's id. An id taken, in this space or another, is refused. */
  async createSprint(
    session: DashboardSession,
    spaceId: number,
    form: SprintForm,
    address: string,
  ): Promise<number> {
    const id = numericId(form.id, 'Sprint id');
    const dates = this.sprintWindow(form);
    const taken = await this.spaces.findSprint(id);
    if (taken) {
      throw new ContentFormRefusal(
        taken.spaceId === spaceId
          ? `Sprint ${id} exists already in this space (“${taken.name}”): choose another id, or edit that sprint.`
          : // Which space holds it, and whether that one is private, is not this form's business.
            `Sprint id ${id} is already used by another space: choose another id.`,
        'id',
        ErrorCode.ALREADY_EXISTS,
      );
    }
    const overlapping = await this.checkOverlap(spaceId, dates, form.allowOverlap);
    const name = form.name.trim();
    await this.apply(spaceId, {
      type: 'sprint',
      id,
      spaceId,
      name,
      startTime: dates.start.iso,
      endTime: dates.end.iso,
    });
    await this.record(session, address, 'sprint.create', spaceId, sprintLabel({ id, name }), {
      id,
      name,
      startTime: dates.start.iso,
      endTime: dates.end.iso,
      overlaps: overlapping.map(sprintLabel),
    });
    return id;
  }

  async updateSprint(
    session: DashboardSession,
    sprint: SprintEntity,
    form: SprintForm,
    address: string,
  ): Promise<void> {
    const dates = this.sprintWindow(form);
    const overlapping = await this.checkOverlap(
      sprint.spaceId,
      dates,
      form.allowOverlap,
      sprint.id,
    );
    const name = form.name.trim();
    await this.apply(sprint.spaceId, {
      type: 'sprint',
      id: sprint.id,
      spaceId: sprint.spaceId,
      name,
      startTime: dates.start.iso,
      endTime: dates.end.iso,
    });
    const label = sprintLabel({ id: sprint.id, name });
    await this.record(session, address, 'sprint.update', sprint.spaceId, label, {
      id: sprint.id,
      name,
      startTime: dates.start.iso,
      endTime: dates.end.iso,
      overlaps: overlapping.map(sprintLabel),
    });
  }

  /** Answers the new quest's id. An id taken, in this space or another, is refused. */
  async createQuest(
    session: DashboardSession,
    spaceId: number,
    form: QuestForm,
    address: string,
  ): Promise<string> {
    const id = form.id.trim();
    const fields = this.questFields(form);
    if (id !== '') {
      const taken = await this.findQuestAnywhere(id);
      if (taken) {
        throw new ContentFormRefusal(
          taken.spaceId === spaceId
            ? `Quest ${id} exists already in this space (“${taken.name}”): choose another id, or edit that quest.`
            : `Quest id ${id} is already used by another space: choose another id.`,
          'id',
          ErrorCode.ALREADY_EXISTS,
        );
      }
    }
    await this.apply(spaceId, { type: 'quest', id, spaceId, ...fields });
    await this.record(session, address, 'quest.create', spaceId, id, { id, ...fields });
    return id;
  }

  /** Type, start, end and cap left empty are cleared. */
  async updateQuest(
    session: DashboardSession,
    quest: QuestEntity,
    form: QuestForm,
    address: string,
  ): Promise<void> {
    const fields = this.questFields(form);
    await this.apply(quest.spaceId, {
      type: 'quest',
      id: quest.id,
      spaceId: quest.spaceId,
      ...fields,
    });
    await this.record(session, address, 'quest.update', quest.spaceId, quest.id, {
      id: quest.id,
      ...fields,
    });
  }

  /** Start and end, both required, the end after the start. */
  private sprintWindow(form: SprintForm) {
    const start = utcTime(form.start, 'start', 'Start');
    const end = utcTime(form.end, 'end', 'End');
    if (end.ms <= start.ms) throw new ContentFormRefusal('The end must be after the start.', 'end');
    return { start, end };
  }

  /** The other sprints of the space the window overlaps: refused naming them, unless allowed. */
  private async checkOverlap(
    spaceId: number,
    dates: { start: { ms: number }; end: { ms: number } },
    allowed: boolean,
    exceptId?: number,
  ): Promise<SprintEntity[]> {
    const overlapping = await this.spaces.overlappingSprints(
      spaceId,
      dates.start.ms,
      dates.end.ms,
      exceptId,
    );
    if (overlapping.length > 0 && !allowed) {
      const names = overlapping.map(
        (other) =>
          `${sprintLabel(other)}, ${utcText(other.startTime)} to ${utcText(other.endTime)}`,
      );
      throw new ContentFormRefusal(
        `These dates overlap ${overlapping.length === 1 ? 'sprint' : 'sprints'} ${names.join('; ')}. ` +
          'Change the dates, or tick “Allow overlapping sprints”.',
        'start',
      );
    }
    return overlapping;
  }

  /** The quest record's fields from the form: empty optional fields are null (cleared). */
  private questFields(form: QuestForm) {
    const status = form.status.trim();
    if (!QUEST_STATUSES.includes(status))
      throw new ContentFormRefusal('Choose a status from the list.', 'status');
    const start = form.start.trim() === '' ? null : utcTime(form.start, 'start', 'Start');
    const end = form.end.trim() === '' ? null : utcTime(form.end, 'end', 'End');
    if (start && end && end.ms <= start.ms)
      throw new ContentFormRefusal('The end must be after the start.', 'end');
    const cap = form.cap.trim();
    if (cap !== '' && !/^\d{1,10}$/.test(cap))
      throw new ContentFormRefusal(
        `Cap must be a whole number from 0 to ${MAX_INT_ID}, or empty for no cap`,
        'cap',
      );
    return {
      name: form.name.trim(),
      status,
      questType: form.type.trim() || null,
      startTime: start?.iso ?? null,
      endTime: end?.iso ?? null,
      cap: cap === '' ? null : Number(cap),
    };
  }

  private async findQuestAnywhere(id: string): Promise<QuestEntity | null> {
    try {
      return await this.quests.requireQuest(id);
    } catch (error) {
      if (error instanceof LoyaltyException && error.code === ErrorCode.QUEST_NOT_FOUND)
        return null;
      throw error;
    }
  }

  /**
   * The record checked as ingestion checks it and applied in the space's write scope (as its space
   * token would send it); a refusal of either is the form's, in the form's words.
   */
  private async apply(spaceId: number, fields: Record<string, unknown>): Promise<void> {
    const parsed = parseRecord(fields);
    if (!parsed.ok) throw formRefusal(parsed.reason, parsed.field);
    const [outcome] = await this.ingest.applyRecords([parsed.record], { spaceId });
    if (outcome.status === 'refused') throw formRefusal(outcome.reason, outcome.field);
  }

  private record(
    session: DashboardSession,
    address: string,
    action: AuditAction,
    spaceId: number,
    target: string,
    detail: AuditEvent['detail'],
  ): Promise<void> {
    return this.audit.record({
      actor: auditActor(session),
      action,
      spaceId,
      target,
      detail,
      address,
    });
  }
}
