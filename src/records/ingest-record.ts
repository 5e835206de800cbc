import { QUEST_STATUSES, QuestStatus } from './quest-status.enum';

/*
 * The records of docs/api.md, Ingestion, one JSON object each. Optional fields are tracked by
 * presence: `undefined` = left out (keep the stored value), `null` = clear it.
 *
 * A quest's own type travels as `questType`, since `type` names the record kind.
 */

export interface SpaceRecord {
  type: 'space';
  id: number;
  name?: string;
  description?: string | null;
  /** What `space(alias:)` finds the space by (galxe profile); unique; null clears it. */
  alias?: string | null;
}

export interface SprintRecord {
  type: 'sprint';
  id: number;
  spaceId?: number;
  name?: string;
  startTime?: number;
  endTime?: number;
}

export interface ProfileRecord {
  type: 'profile';
  address: string;
  username?: string | null;
  avatar?: string | null;
}

export interface QuestRecord {
  type: 'quest';
  id: string;
  spaceId?: number;
  name?: string;
  status?: QuestStatus;
  questType?: string | null;
  startTime?: number | null;
  endTime?: number | null;
  cap?: number | null;
}

export interface ParticipationRecord {
  type: 'participation';
  questId: string;
  address: string;
}

export interface PointsRecord {
  type: 'points';
  key: string;
  spaceId: number;
  address: string;
  points: number;
  occurredAt: number;
  /** Why the points were granted or deducted, kept in the ledger; null or absent: none given. */
  reason?: string | null;
}

export type IngestRecord =
  SpaceRecord | SprintRecord | ProfileRecord | QuestRecord | ParticipationRecord | PointsRecord;

export type ParseResult =
  | { ok: true; record: IngestRecord }
  /** `field` names the field at fault, when one is. */
  | { ok: false; reason: string; field?: string };

export const MAX_INT_ID = 2_147_483_647;
export const MAX_POINTS_PER_RECORD = 1_000_000_000;
/** A points record's reason, in characters (points_events.reason). */
export const MAX_REASON_LENGTH = 200;

/** A record refused for one field; the message names the field too. */
class RecordError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-](\d{2}):(\d{2}))$/;

/** Epoch milliseconds of an ISO 8601 date-time with an explicit offset, or null. */
export function parseIsoTime(value: string): number | null {
  const m = ISO_8601.exec(value);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = m[6] ? Number(m[6]) : 0;
  const millis = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return null;
  if (day < 1 || day > daysInMonth(year, month)) return null;
  let offset = 0;
  if (m[8] !== 'Z') {
    const sign = m[8].startsWith('-') ? -1 : 1;
    const oh = Number(m[9]);
    const om = Number(m[10]);
    if (oh > 23 || om > 59) return null;
    offset = sign * (oh * 60 + om) * 60_000;
  }
  const seconds = (hour * 60 + minute) * 60 + second;
  return daysFromCivil(year, month, day) * 86_400_000 + seconds * 1000 + millis - offset;
}

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar (H. Hinnant's
 * days_from_civil): arithmetic only, no Date object on the parse path.
 */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

const FIELDS: Record<IngestRecord['type'], readonly string[]> = {
  space: ['id', 'name', 'description', 'alias'],
  sprint: ['id', 'spaceId', 'name', 'startTime', 'endTime'],
  profile: ['address', 'username', 'avatar'],
  quest: ['id', 'spaceId', 'name', 'status', 'questType', 'startTime', 'endTime', 'cap'],
  participation: ['questId', 'address'],
  points: ['key', 'spaceId', 'address', 'points', 'occurredAt', 'reason'],
};

type Source = Record<string, unknown>;

function has(source: Source, field: string): boolean {
  return Object.prototype.hasOwnProperty.call(source, field);
}

function int(source: Source, field: string, min: number, max: number): number {
  const value = source[field];
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new RecordError(field, `${field} must be an integer`);
  }
  if (value < min || value > max)
    throw new RecordError(field, `${field} must be from ${min} to ${max}`);
  return value;
}

function text(source: Source, field: string, maxLength: number): string {
  const value = source[field];
  if (typeof value !== 'string') throw new RecordError(field, `${field} must be a string`);
  if (value.trim() === '') throw new RecordError(field, `${field} must not be empty`);
  if (value.length > maxLength)
    throw new RecordError(field, `${field} must be at most ${maxLength} characters`);
  if (/[\u0000-\u001f\u007f]/.test(value))
    throw new RecordError(field, `${field} must not contain control characters`);
  return value;
}

/** Keys and ids: also no surrounding white space, which databases may or may not ignore. */
function identifier(source: Source, field: string, maxLength: number): string {
  const value = text(source, field, maxLength);
  if (value.trim() !== value)
    throw new RecordError(field, `${field} must not start or end with white space`);
  return value;
}

/** A space's alias: the form Galxe's space URLs use (app.galxe.com/quest/<alias>), lower case. */
const ALIAS_PATTERN = /^[a-z0-9][a-z0-9-]{0,63}$/;

/** Whether `value` is a space alias as records set them (lower case, see ALIAS_PATTERN). */
export function isSpaceAlias(value: string): boolean {
  return ALIAS_PATTERN.test(value);
}

function alias(source: Source, field: string): string {
  const value = source[field];
  if (typeof value !== 'string' || !ALIAS_PATTERN.test(value)) {
    throw new RecordError(
      field,
      `${field} must be 1 to 64 lower-case letters, digits and hyphens, starting with a letter or digit`,
    );
  }
  return value;
}

function address(source: Source, field: string): string {
  const value = text(source, field, 128);
  if (!/^[\x21-\x7e]+$/.test(value)) {
    throw new RecordError(field, `${field} must be printable ASCII without spaces`);
  }
  return value;
}

function time(source: Source, field: string): number {
  const value = source[field];
  const parsed = typeof value === 'string' ? parseIsoTime(value) : null;
  if (parsed === null) {
    throw new RecordError(
      field,
      `${field} must be an ISO 8601 date-time with an offset, e.g. 2026-01-31T12:00:00Z`,
    );
  }
  return parsed;
}

/** Reads an optional field: absent stays undefined, null stays null (clear), else `read`. */
function optional<T>(
  source: Source,
  field: string,
  read: () => T,
  nullable: boolean,
): T | null | undefined {
  if (!has(source, field)) return undefined;
  if (source[field] === null) {
    if (!nullable) throw new RecordError(field, `${field} cannot be null`);
    return null;
  }
  return read();
}

function required<T>(source: Source, field: string, read: () => T): T {
  if (!has(source, field) || source[field] === null)
    throw new RecordError(field, `${field} is required`);
  return read();
}

function parseFields(kind: IngestRecord['type'], s: Source): IngestRecord {
  const spaceId = () => int(s, 'spaceId', 1, MAX_INT_ID);
  switch (kind) {
    case 'space':
      return {
        type: 'space',
        id: required(s, 'id', () => int(s, 'id', 1, MAX_INT_ID)),
        name: optional(s, 'name', () => text(s, 'name', 255), false) ?? undefined,
        description: optional(s, 'description', () => text(s, 'description', 10_000), true),
        alias: optional(s, 'alias', () => alias(s, 'alias'), true),
      };
    case 'sprint': {
      const record: SprintRecord = {
        type: 'sprint',
        id: required(s, 'id', () => int(s, 'id', 1, MAX_INT_ID)),
        spaceId: optional(s, 'spaceId', spaceId, false) ?? undefined,
        name: optional(s, 'name', () => text(s, 'name', 255), false) ?? undefined,
        startTime: optional(s, 'startTime', () => time(s, 'startTime'), false) ?? undefined,
        endTime: optional(s, 'endTime', () => time(s, 'endTime'), false) ?? undefined,
      };
      if (
        record.startTime !== undefined &&
        record.endTime !== undefined &&
        record.endTime <= record.startTime
      ) {
        throw new RecordError('endTime', 'endTime must be after startTime');
      }
      return record;
    }
    case 'profile':
      return {
        type: 'profile',
        address: required(s, 'address', () => address(s, 'address')),
        username: optional(s, 'username', () => text(s, 'username', 255), true),
        avatar: optional(s, 'avatar', () => text(s, 'avatar', 2048), true),
      };
    case 'quest': {
      const status = optional(
        s,
        'status',
        () => {
          const value = s.status;
          if (typeof value !== 'string' || !QUEST_STATUSES.includes(value)) {
            throw new RecordError('status', `status must be one of ${QUEST_STATUSES.join(', ')}`);
          }
          return value as QuestStatus;
        },
        false,
      );
      return {
        type: 'quest',
        id: required(s, 'id', () => identifier(s, 'id', 128)),
        spaceId: optional(s, 'spaceId', spaceId, false) ?? undefined,
        name: optional(s, 'name', () => text(s, 'name', 255), false) ?? undefined,
        status: status ?? undefined,
        questType: optional(s, 'questType', () => text(s, 'questType', 64), true),
        startTime: optional(s, 'startTime', () => time(s, 'startTime'), true),
        endTime: optional(s, 'endTime', () => time(s, 'endTime'), true),
        cap: optional(s, 'cap', () => int(s, 'cap', 0, MAX_INT_ID), true),
      };
    }
    case 'participation':
      return {
        type: 'participation',
        questId: required(s, 'questId', () => identifier(s, 'questId', 128)),
        address: required(s, 'address', () => address(s, 'address')),
      };
    case 'points':
      return {
        type: 'points',
        key: required(s, 'key', () => identifier(s, 'key', 191)),
        spaceId: required(s, 'spaceId', spaceId),
        address: required(s, 'address', () => address(s, 'address')),
        points: required(s, 'points', () =>
          int(s, 'points', -MAX_POINTS_PER_RECORD, MAX_POINTS_PER_RECORD),
        ),
        occurredAt: required(s, 'occurredAt', () => time(s, 'occurredAt')),
        reason: optional(s, 'reason', () => text(s, 'reason', MAX_REASON_LENGTH).trim(), true),
      };
  }
}

/** Validates one decoded JSON value as a record; the reason names the field at fault. */
export function parseRecord(value: unknown): ParseResult {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, reason: 'a record must be a JSON object' };
  }
  const source = value as Source;
  const kind = source.type;
  if (typeof kind !== 'string' || !Object.prototype.hasOwnProperty.call(FIELDS, kind)) {
    return {
      ok: false,
      field: 'type',
      reason: `type must be one of ${Object.keys(FIELDS).join(', ')}`,
    };
  }
  const known = FIELDS[kind as IngestRecord['type']];
  const unknown = Object.keys(source).filter((field) => field !== 'type' && !known.includes(field));
  if (unknown.length > 0) {
    return {
      ok: false,
      field: unknown[0],
      reason: `unknown field ${unknown.map((f) => `"${f}"`).join(', ')} for type ${kind}`,
    };
  }
  try {
    return { ok: true, record: parseFields(kind as IngestRecord['type'], source) };
  } catch (error) {
    if (error instanceof RecordError)
      return { ok: false, field: error.field, reason: error.message };
    throw error;
  }
}

/** Parses one NDJSON line. */
export function parseRecordLine(line: string): ParseResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'not valid JSON' };
  }
  return parseRecord(value);
}
