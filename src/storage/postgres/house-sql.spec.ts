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

  it('renders a text once and answers the same text after', () => {
    const sql = 'SELECT seq, space_id AS spaceId FROM board_changes WHERE seq > ?';
    expect(renderForPostgres(sql)).toBe(
      'SELECT seq, space_id AS "spaceId" FROM board_changes WHERE seq > $1',
    );
    expect(renderForPostgres(sql)).toBe(renderForPostgres(sql));
  });
});
