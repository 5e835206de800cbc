import { renderForPostgres, toPostgresSql } from './house-sql';

describe('house SQL in PostgreSQL spelling', () => {
  it('numbers the placeholders in order', () => {
    expect(toPostgresSql('SELECT id FROM spaces WHERE id IN (?, ?, ?) LIMIT ?')).toBe(
      'SELECT id FROM spaces WHERE id IN ($1, $2, $3) LIMIT $4',
    );
  });

  it('quotes camelCase output names, wherever they appear, and nothing else', () => {
    expect(
      toPostgresSql(
        'SELECT address_key AS addressKey, points FROM board_entries AS b ORDER BY points DESC, addressKey ASC',
      ),
    ).toBe(
      'SELECT address_key AS "addressKey", points FROM board_entries AS b ORDER BY points DESC, "addressKey" ASC',
    );
    // Keywords and functions in capitals, names in lower case, EXCLUDED's columns: as they are.
    expect(toPostgresSql('SELECT COALESCE(SUM(entry_count), 0) AS n, EXCLUDED.points')).toBe(
      'SELECT COALESCE(SUM(entry_count), 0) AS n, EXCLUDED.points',
    );
  });

  it('leaves string literals, quoted names and comments alone', () => {
    expect(
      toPostgresSql(
        `SELECT 'It''s? camelCase' AS "keptAs", x -- what? isNot\n FROM t /* a ? here, notQuoted */ WHERE y = ?`,
      ),
    ).toBe(
      `SELECT 'It''s? camelCase' AS "keptAs", x -- what? isNot\n FROM t /* a ? here, notQuoted */ WHERE y = $1`,
    );
  });

  it('reads numbers whole, so that 1e5 or 0x1F is not taken for a name', () => {
    expect(toPostgresSql('SELECT 1e5, 0x1F, 86400000 FROM t WHERE n = ?')).toBe(
      'SELECT 1e5, 0x1F, 86400000 FROM t WHERE n = $1',
    );
  });

  it("refuses what is not house SQL: MySQL's backticks, PostgreSQL's own placeholders", () => {
    expect(() => toPostgresSql('SELECT `name` FROM t')).toThrow(/backticks/);
    expect(() => toPostgresSql('SELECT name FROM t WHERE id = $1')).toThrow(/\$ placeholders/);
    expect(() => toPostgresSql("SELECT 'unclosed FROM t")).toThrow(/Unclosed ' in SQL/);
  });

  it('answers a text seen before as it did the first time, also past the texts it remembers', () => {
    const sql = 'SELECT seq, space_id AS spaceId FROM board_changes WHERE seq > ?';
    const expected = 'SELECT seq, space_id AS "spaceId" FROM board_changes WHERE seq > $1';
    expect(renderForPostgres(sql)).toBe(expected);
    expect(renderForPostgres(sql)).toBe(expected);
    // Statements with IN lists come in as many texts as list lengths: more than it keeps.
    for (let n = 1; n <= 6_000; n++) {
      const list = Array.from({ length: n % 300 }, () => '?').join(', ');
      const inList = `SELECT a.fooBar FROM t a WHERE a.id IN (${list || 'NULL'}) AND a.n = ${n}`;
      const numbered = Array.from({ length: n % 300 }, (_, i) => `$${i + 1}`).join(', ');
      expect(renderForPostgres(inList)).toBe(
        `SELECT a."fooBar" FROM t a WHERE a.id IN (${numbered || 'NULL'}) AND a.n = ${n}`,
      );
    }
    expect(renderForPostgres(sql)).toBe(expected);
  });
});
