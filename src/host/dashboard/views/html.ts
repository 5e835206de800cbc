/** HTML that is already safe to insert. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(value);
}

/** Tagged template: every interpolated value is escaped unless it is SafeHtml (or a list of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  values.forEach((value, i) => (out += render(value) + strings[i + 1]));
  return new SafeHtml(out);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const twoDigits = (n: number) => String(n).padStart(2, '0');

/**
 * A day as every page writes it, in UTC: "20 Nov 2026". The month spelled out, so that no reader
 * takes 03/04 for the wrong day; UTC, as the API's times are, so a page and /query agree.
 */
export function formatDate(iso: string): string {
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  return `${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]} ${at.getUTCFullYear()}`;
}

/**
 * A moment as every page writes it: "20 Nov 2026, 14:05 UTC" (with `seconds`, "14:05:09 UTC",
 * where entries a moment apart must be told apart); null is "Never".
 */
export function formatTime(iso: string | null, options: { seconds?: boolean } = {}): string {
  if (iso === null) return 'Never';
  const at = new Date(iso);
  if (Number.isNaN(at.getTime())) return iso;
  const clock = [
    at.getUTCHours(),
    at.getUTCMinutes(),
    ...(options.seconds ? [at.getUTCSeconds()] : []),
  ]
    .map(twoDigits)
    .join(':');
  return `${formatDate(iso)}, ${clock} UTC`;
}

/** A moment in a <time> element: the words of {@link formatTime}, the exact instant for machines. */
export function timeTag(iso: string | null, options: { seconds?: boolean } = {}): SafeHtml {
  return iso === null
    ? html`Never`
    : html`<time datetime="${iso}">${formatTime(iso, options)}</time>`;
}

/** A whole number with thousands separators: 99,823. */
export function formatNumber(value: number): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: 20 });
}

/** A column of a {@link dataTable}: its label, `num` for right-aligned numbers. */
export type Column = string | { label: string; num?: boolean };
/** The last column of a table whose rows end with their actions: a label for screen readers. */
export const ACTIONS_COLUMN: Column = { label: '' };

/** A table of rows with a caption for screen readers and one header row. */
export function dataTable(
  className: string,
  caption: string,
  columns: readonly Column[],
  rows: readonly SafeHtml[],
): SafeHtml {
  const header = columns.map((column) => {
    if (column === ACTIONS_COLUMN)
      return html`<th scope="col"><span class="visually-hidden">Actions</span></th>`;
    const { label, num } = typeof column === 'string' ? { label: column, num: false } : column;
    return num
      ? html`<th scope="col" class="num">${label}</th>`
      : html`<th scope="col">${label}</th>`;
  });
  return html`<table class="${className}">
    <caption class="visually-hidden">
      ${caption}
    </caption>
    <thead>
      <tr>
        ${header}
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}
