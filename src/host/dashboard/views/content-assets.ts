/* The content pages' part of the dashboard's stylesheet and script (assets.ts serves them together). */

export const CONTENT_CSS = `
.content-form { max-width:640px; }
.content-form .field { margin:0 0 14px; }
.content-form .field .hint { margin:4px 0 0; }
.content-form .optional { font-weight:400; color:var(--muted); }
.content-form input[aria-invalid="true"], .content-form select[aria-invalid="true"] { border:2px solid var(--danger); }
.content-form .check { margin:4px 0 0; }
.content-form .check .hint { flex-basis:100%; }
.content-form .fixed-id { margin:0 0 14px; }
.content-form .row.buttons { gap:16px; }
`;

export const CONTENT_JS = `
// A refused content form: the field the refusal is about takes the focus, to be fixed at once.
{
  const invalid = document.querySelector('.content-form [aria-invalid="true"]');
  if (invalid) invalid.focus();
}
`;
