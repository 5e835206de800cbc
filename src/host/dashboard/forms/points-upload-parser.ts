import { createHash } from 'node:crypto';
import { ErrorCode } from '../../../common/errors/error-code';
import { LoyaltyException } from '../../../common/errors/loyalty.exception';
import { parseRecord, PointsRecord } from '../../../records/ingest-record';

/*
 * Points uploads as the dashboard reads them: CSV with a header line, or NDJSON, one grant or
 * deduction a line. Pure functions: the service stores what they answer.
 */

/** An upload's text, in UTF-8 bytes. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
/** Lines of points in one upload (a CSV's header line not counted). */
export const MAX_UPLOAD_LINES = 100_000;
/** A refused line's message as stored (points_upload_lines.error). */
export const MAX_LINE_MESSAGE = 300;

export type UploadFormat = 'csv' | 'ndjson';
type Column = 'address' | 'points' | 'reason' | 'occurredAt';

const COLUMNS: readonly Column[] = ['address', 'points', 'reason', 'occurredAt'];
const COLUMN_LIST = 'address, points, reason and occurredAt';

/** An upload's text as its keys are derived from it, and what its first line says it is. */
export interface NormalisedUpload {
  /** Without a byte order mark, with LF line ends, no trailing white space, no trailing blank line. */
  text: string;
  format: UploadFormat;
  /** A CSV's columns, in order (its header is line `headerLine`). */
  columns: readonly Column[];
  headerLine: number;
  /** Non-blank lines of points. */
  lineCount: number;
  /** SHA-256 (hex) of the space id and the text: the same file in the same space, the same keys. */
  sha256: string;
}

/** One valid line, as it will be applied. */
export interface UploadLine {
  line: number;
  address: string;
  points: number;
  reason: string;
  /** Its own time; null when it gives none: it counts from when the upload is applied. */
  occurredAt: number | null;
}

export interface UploadRefusal {
  line: number;
  message: string;
}

export interface ParsedUpload {
  lines: UploadLine[];
  refused: UploadRefusal[];
}

/** What a line gets when it says nothing of its own. */
export interface UploadDefaults {
  spaceId: number;
  /** The reason given for the whole upload, if any. */
  reason: string | null;
}

/**
 * Stands in for the time of a line without one while the line is checked: that time is only
 * known at the apply, and any valid time passes the same checks.
 */
const CHECKED_TIME = '1970-01-01T00:00:00Z';

const invalid = (message: string) => new LoyaltyException(ErrorCode.INVALID_ARGUMENT, message);
const count = (n: number) => n.toLocaleString('en-US');
const quoted = (name: string) => JSON.stringify(name.length > 40 ? `${name.slice(0, 39)}…` : name);

/**
 * The key of an upload's line: the same line of the same file uploaded to the same space again
 * has the same key, which the ledger applies once.
 */
export const uploadLineKey = (sha256: string, line: number) =>
  `upload:${sha256.slice(0, 32)}:${line}`;

/**
 * Checks an upload's size and first line and normalises its text: line ends and trailing white
 * space that editors change on their own do not make it another file. Refuses (413) more than
 * MAX_UPLOAD_BYTES or MAX_UPLOAD_LINES, and (400) an empty upload or a CSV header it cannot read.
 */
export function normaliseUpload(content: string, spaceId: number): NormalisedUpload {
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > MAX_UPLOAD_BYTES)
    throw new LoyaltyException(
      ErrorCode.REQUEST_TOO_LARGE,
      `The upload is ${(bytes / 1024 / 1024).toFixed(1)} MB: at most 10 MB (${count(MAX_UPLOAD_BYTES)} bytes) a file. Split it into smaller files`,
    );
  const lines = content
    .replace(/^\uFEFF/, '')
    .split(/\r\n|\r|\n/)
    .map((line) => line.replace(/[ \t]+$/, ''));
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const first = lines.findIndex((line) => line.trim() !== '');
  if (first < 0) throw invalid('Paste some lines or choose a file: the upload is empty');
  const format: UploadFormat = lines[first].trimStart().startsWith('{') ? 'ndjson' : 'csv';
  const columns = format === 'csv' ? headerColumns(lines[first], first + 1) : [];
  let lineCount = 0;
  for (let i = format === 'csv' ? first + 1 : first; i < lines.length; i++)
    if (lines[i].trim() !== '') lineCount++;
  if (lineCount === 0) throw invalid('The upload has a header line but no lines of points');
  if (lineCount > MAX_UPLOAD_LINES)
    throw new LoyaltyException(
      ErrorCode.REQUEST_TOO_LARGE,
      `The upload has ${count(lineCount)} lines: at most ${count(MAX_UPLOAD_LINES)} a file. Split it into smaller files`,
    );
  const text = lines.join('\n');
  const sha256 = createHash('sha256').update(`${spaceId}\n`).update(text).digest('hex');
  return { text, format, columns, headerLine: format === 'csv' ? first + 1 : 0, lineCount, sha256 };
}

/** Reads every line of a normalised upload: the valid ones, and each refused one with why. */
export function parseUploadLines(upload: NormalisedUpload, defaults: UploadDefaults): ParsedUpload {
  const parsed: ParsedUpload = { lines: [], refused: [] };
  upload.text.split('\n').forEach((text, i) => {
    const line = i + 1;
    if (text.trim() === '' || line <= upload.headerLine) return;
    const fields =
      upload.format === 'csv' ? csvLineFields(text, upload.columns) : ndjsonLineFields(text);
    const result = fields.ok ? validLine(fields.value, line, upload.sha256, defaults) : fields;
    if (result.ok) parsed.lines.push(result.value);
    else parsed.refused.push({ line, message: result.message.slice(0, MAX_LINE_MESSAGE) });
  });
  return parsed;
}

type LineFields = Partial<Record<Column, unknown>>;
/** What reading a line answers: its value, or why it is refused. */
type Read<T> = { ok: true; value: T } | { ok: false; message: string };
const refusal = (message: string): { ok: false; message: string } => ({ ok: false, message });

/** A line's fields, checked as the ledger checks a points record, with the upload's defaults. */
function validLine(
  fields: LineFields,
  line: number,
  sha256: string,
  defaults: UploadDefaults,
): Read<UploadLine> {
  const points = wholeNumber(fields.points);
  if (points === null) return refusal('points must be a whole number, such as 25 or -10');
  if (points === 0) return refusal('points must not be 0');
  const reason = present(fields.reason) ?? defaults.reason;
  if (reason === null)
    return refusal('reason is required: give one on the line or for the whole upload');
  const ownTime = present(fields.occurredAt);
  const result = parseRecord({
    type: 'points',
    key: uploadLineKey(sha256, line),
    spaceId: defaults.spaceId,
    address: typeof fields.address === 'string' ? fields.address.trim() : fields.address,
    points,
    occurredAt: ownTime ?? CHECKED_TIME,
    reason,
  });
  if (!result.ok) return refusal(result.reason);
  const record = result.record as PointsRecord;
  return {
    ok: true,
    value: {
      line,
      address: record.address,
      points: record.points,
      // Given, so kept (trimmed) by parseRecord.
      reason: record.reason ?? '',
      occurredAt: ownTime === null ? null : record.occurredAt,
    },
  };
}

/** A field's value when it holds something: a blank cell or null is none. */
function present(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' && value.trim() === '') return null;
  return typeof value === 'string' ? value.trim() : value;
}

function wholeNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : null;
  if (typeof value === 'string' && /^[+-]?\d{1,15}$/.test(value.trim())) return Number(value);
  return null;
}

/** The columns a CSV's header line names: address and points, optionally reason and occurredAt. */
function headerColumns(text: string, line: number): Column[] {
  const fields = csvFields(text);
  if (!fields.ok) throw invalid(`Line ${line}, the header: ${fields.message}`);
  const names = fields.value.map((name) => name.trim());
  if (names.length === 1 && /[;\t]/.test(names[0]))
    throw invalid(`Line ${line}, the header: separate the columns with commas (address,points)`);
  const columns: Column[] = [];
  for (const name of names) {
    const column = COLUMNS.find((known) => known.toLowerCase() === name.toLowerCase());
    if (!column)
      throw invalid(
        `Line ${line}, the header: unknown column ${quoted(name)}: the columns are ${COLUMN_LIST}`,
      );
    if (columns.includes(column))
      throw invalid(`Line ${line}, the header: column ${quoted(column)} appears twice`);
    columns.push(column);
  }
  if (!columns.includes('address') || !columns.includes('points'))
    throw invalid(
      `Line ${line}, the header: name the columns address and points (reason and occurredAt are optional), e.g. address,points,reason`,
    );
  return columns;
}

function csvLineFields(text: string, columns: readonly Column[]): Read<LineFields> {
  const fields = csvFields(text);
  if (!fields.ok) return fields;
  const n = fields.value.length;
  if (n !== columns.length)
    return refusal(`has ${n} field${n === 1 ? '' : 's'}; the header names ${columns.length}`);
  return { ok: true, value: Object.fromEntries(columns.map((c, i) => [c, fields.value[i]])) };
}

/** The fields of one CSV line (RFC 4180 quoting; a quoted field cannot span lines). */
function csvFields(text: string): Read<string[]> {
  const fields: string[] = [];
  let at = 0;
  for (;;) {
    if (text[at] === '"') {
      let value = '';
      let from = at + 1;
      for (;;) {
        const quote = text.indexOf('"', from);
        if (quote < 0) return refusal('a quoted field is not closed on its line');
        value += text.slice(from, quote);
        if (text[quote + 1] !== '"') {
          at = quote + 1;
          break;
        }
        value += '"';
        from = quote + 2;
      }
      if (at < text.length && text[at] !== ',')
        return refusal('a quoted field must end before the next comma');
      fields.push(value);
    } else {
      const comma = text.indexOf(',', at);
      const end = comma < 0 ? text.length : comma;
      fields.push(text.slice(at, end));
      at = end;
    }
    if (at >= text.length) return { ok: true, value: fields };
    at++; // the comma
  }
}

function ndjsonLineFields(text: string): Read<LineFields> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return refusal('is not valid JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value))
    return refusal('must be a JSON object such as {"address":"0x…","points":25}');
  const unknown = Object.keys(value).filter((field) => !COLUMNS.includes(field as Column));
  if (unknown.length > 0)
    return refusal(`unknown field ${quoted(unknown[0])}: the fields are ${COLUMN_LIST}`);
  return { ok: true, value };
}

/**
 * A space keeps the lines of its KEPT_UPLOADS newest uploads, each for KEPT_UPLOAD_MS: an older
 * one expires when its space gets an upload or when it is read, so none is shown or applied after.
 */
export const KEPT_UPLOADS = 10;
export const KEPT_UPLOAD_MS = 7 * 24 * 3600_000;
/** And the summaries of this many, whose lines are gone. */
export const KEPT_SUMMARIES = 200;
/** A refused line's page. */
export const LINES_PAGE = 100;

/** An upload's lines that can be applied: those read without a refusal. */
export const validLines = (upload: { lineCount: number; errorCount: number }): number =>
  upload.lineCount - upload.errorCount;
