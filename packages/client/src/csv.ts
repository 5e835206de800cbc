/*
 * The board as CSV, byte for byte what the service's `loyalty export` writes (src/common/csv.ts
 * in the repository). A copy, so the package needs nothing of the service; csv.spec.ts fails
 * when the two differ.
 */
export const BOARD_CSV_HEADER = 'rank,address,username,points';

export interface BoardCsvRow {
  rank: number;
  address: string;
  username: string | null;
  points: number;
}

export function csvField(value: string | number): string {
  let text = String(value);
  // A cell starting like a formula would run as one in a spreadsheet (CSV injection).
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function boardCsvLine(row: BoardCsvRow): string {
  return [row.rank, row.address, row.username ?? '', row.points].map(csvField).join(',');
}
