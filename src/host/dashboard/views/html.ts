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

export function formatTime(iso: string | null): string {
  return iso === null ? 'Never' : iso.replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC');
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
