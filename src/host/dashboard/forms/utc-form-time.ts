import { parseIsoTime } from '../../../records/ingest-record';

/*
 * Dates and times on the dashboard's forms are UTC, said so on the page: a datetime-local input
 * has no zone, and reading it in the server's or the browser's zone would move a sprint by hours.
 */

/** "2026-01-31T12:00" as a datetime-local input sends it (seconds optional); a typed Z is fine. */
const UTC_INPUT = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?)Z?$/i;

/** What a form's date and time means: ISO 8601 text as ingestion takes it, and its epoch ms. */
export interface UtcTime {
  iso: string;
  ms: number;
}

/** The form's value read as UTC; null when it is no date and time. */
export function parseUtcInput(value: string): UtcTime | null {
  const match = UTC_INPUT.exec(value.trim());
  if (!match) return null;
  const ms = parseIsoTime(`${match[1]}T${match[2]}Z`);
  return ms === null ? null : { iso: new Date(ms).toISOString(), ms };
}

/** A stored time as a datetime-local input shows it: seconds and milliseconds only when set. */
export function utcInputValue(ms: number): string {
  const iso = new Date(ms).toISOString();
  if (ms % 1000 !== 0) return iso.slice(0, 23);
  return iso.slice(11, 19).endsWith(':00') ? iso.slice(0, 16) : iso.slice(0, 19);
}

/**
 * The input's step: minutes, as people set them; seconds or milliseconds for a value that has them
 * (an ingested time), which a coarser step would hold invalid and refuse to send.
 */
export function utcInputStep(value: string): string {
  if (value.includes('.')) return '0.001';
  return /T\d{2}:\d{2}:\d{2}/.test(value) ? '1' : '60';
}

/** A stored time as a sentence shows it: "2026-01-31 12:00 UTC". */
export function utcText(ms: number): string {
  return `${utcInputValue(ms).replace('T', ' ')} UTC`;
}
