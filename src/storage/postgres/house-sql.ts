/**
 * The library writes its SQL once, in one spelling every database reads (docs/adr/0004): `?`
 * placeholders, lower-case snake_case names, upper-case keywords and camelCase output names
 * (`address_key AS addressKey`). PostgreSQL numbers its placeholders (`$1`) and folds unquoted
 * names to lower case, so a camelCase output name would come back as `addresskey`; this turns a
 * statement into PostgreSQL's spelling: each `?` becomes `$n` and each mixed-case name is quoted.
 * String literals, quoted names and comments are left as they are.
 */
export function toPostgresSql(sql: string): string {
  let out = '';
  let placeholder = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      const end = closingQuote(sql, i, c);
      out += sql.slice(i, end);
      i = end;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const stop = end === -1 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      const stop = end === -1 ? sql.length : end + 2;
      out += sql.slice(i, stop);
      i = stop;
    } else if (c === '`' || c === '$') {
      // MySQL's quoting, or PostgreSQL's own placeholders: not house SQL, and a mistake here.
      throw new Error(`House SQL has neither backticks nor $ placeholders: ${sql}`);
    } else if (c === '?') {
      out += `$${++placeholder}`;
      i++;
    } else if (isWordStart(c)) {
      let end = i + 1;
      while (end < sql.length && isWordPart(sql[end])) end++;
      const word = sql.slice(i, end);
      out += isMixedCase(word) ? `"${word}"` : word;
      i = end;
    } else if (c >= '0' && c <= '9') {
      // A number, whole: `1e5` or `0x1F` must not look like a name to the loop above.
      let end = i + 1;
      while (end < sql.length && isWordPart(sql[end])) end++;
      out += sql.slice(i, end);
      i = end;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** The index just past the quote that closes the one at `start` (a doubled quote is escaped). */
function closingQuote(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === quote) {
      if (sql[i + 1] === quote) i += 2;
      else return i + 1;
    } else i++;
  }
  throw new Error(`Unclosed ${quote} in SQL: ${sql}`);
}

const isWordStart = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_';
const isWordPart = (c: string) => isWordStart(c) || (c >= '0' && c <= '9');

/**
 * Keywords and functions are written in capitals and names in lower case; a word with both is an
 * output name that must keep its case.
 */
const isMixedCase = (word: string) => /[a-z]/.test(word) && /[A-Z]/.test(word);

/** Statements are rendered once each: the library's SQL is a few hundred fixed texts. */
const rendered = new Map<string, string>();
const RENDERED_LIMIT = 5_000;

/** {@link toPostgresSql}, remembered for the texts seen most recently. */
export function renderForPostgres(sql: string): string {
  let text = rendered.get(sql);
  if (text === undefined) {
    text = toPostgresSql(sql);
    // Statements whose text grows with their input (IN lists) are many: keep the cache bounded.
    if (rendered.size >= RENDERED_LIMIT) rendered.clear();
    rendered.set(sql, text);
  }
  return text;
}
