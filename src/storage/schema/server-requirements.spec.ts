import {
  findProblems,
  SERVER_REQUIREMENTS,
  ServerFacts,
  versionAtLeast,
  versionNumbers,
} from './server-requirements';

/** A MySQL 8 server with everything the schema needs. */
const MYSQL_8: ServerFacts = {
  product: 'MySQL',
  version: '8.0.36',
  database: 'loyalty',
  collations: new Map([
    ['utf8mb4_0900_bin', 'utf8mb4'],
    ['utf8mb4_bin', 'utf8mb4'],
  ]),
  hasCharset: true,
  innodb: 'DEFAULT',
  existingTables: [],
};

const MARIADB_10_11: ServerFacts = {
  ...MYSQL_8,
  product: 'MariaDB',
  version: '10.11.19-MariaDB-0+deb12u1',
  collations: new Map([['utf8mb4_nopad_bin', 'utf8mb4']]),
};

describe('versions', () => {
  it("reads the leading numbers, past a proxy's 5.5.5- prefix", () => {
    expect(versionNumbers('10.11.19-MariaDB-0+deb12u1')).toEqual([10, 11, 19]);
    expect(versionNumbers('5.5.5-10.6.12-MariaDB')).toEqual([10, 6, 12]);
    expect(versionNumbers('8.0.36')).toEqual([8, 0, 36]);
    expect(versionNumbers('unknown')).toEqual([]);
  });

  it.each([
    ['8.0.17', '8.0.17', true],
    ['8.0.36', '8.0.17', true],
    ['8.4.0', '8.0.17', true],
    ['8.0.16', '8.0.17', false],
    ['5.7.44-log', '8.0.17', false],
    ['10.8.1-MariaDB', '10.8', true],
    ['10.11.19-MariaDB', '10.8', true],
    ['10.6.12-MariaDB', '10.8', false],
    ['3.35.0', '3.35.0', true],
    ['3.34.1', '3.35.0', false],
    ['', '8.0.17', false],
  ])('%s is at least %s: %s', (version, minimum, expected) => {
    expect(versionAtLeast(version, minimum)).toBe(expected);
  });
});

describe('the requirements of each server', () => {
  it('key columns binary and NO PAD on both: 0900_bin on MySQL, nopad_bin on MariaDB', () => {
    expect(SERVER_REQUIREMENTS.mysql.keyCollation).toBe('utf8mb4_0900_bin');
    expect(SERVER_REQUIREMENTS.mariadb.keyCollation).toBe('utf8mb4_nopad_bin');
    expect(SERVER_REQUIREMENTS.sqlite.keyCollation).toBeUndefined();
  });

  it('find nothing wrong with MySQL 8 or MariaDB 10.11 as they come', () => {
    expect(findProblems(MYSQL_8, SERVER_REQUIREMENTS.mysql)).toEqual([]);
    expect(findProblems(MARIADB_10_11, SERVER_REQUIREMENTS.mariadb)).toEqual([]);
  });

  it("refuse MariaDB's collation on MySQL and MySQL's on MariaDB 10.11", () => {
    expect(findProblems(MYSQL_8, SERVER_REQUIREMENTS.mariadb)).toEqual([
      expect.stringContaining('has no utf8mb4 collation utf8mb4_nopad_bin'),
    ]);
    expect(findProblems(MARIADB_10_11, SERVER_REQUIREMENTS.mysql)).toEqual([
      'the server (MariaDB 10.11.19) has no utf8mb4 collation utf8mb4_0900_bin, which key columns ' +
        'need (binary and NO PAD: case-sensitive, trailing spaces significant): use MySQL 8.0.17 ' +
        'or later (utf8mb4_0900_bin) or MariaDB 10.8 or later (utf8mb4_nopad_bin)',
    ]);
  });

  it('refuse a server older than supported, naming what is', () => {
    expect(
      findProblems(
        { ...MYSQL_8, version: '5.7.44-log', collations: new Map() },
        SERVER_REQUIREMENTS.mysql,
      ),
    ).toEqual([
      'the server is MySQL 5.7.44; the schema needs MySQL 8.0.17 or later: upgrade it (MySQL ' +
        '8.0.17 and MariaDB 10.8 are the oldest supported)',
      expect.stringContaining('has no utf8mb4 collation utf8mb4_0900_bin'),
    ]);
    expect(
      findProblems(
        { ...MARIADB_10_11, version: '10.6.12-MariaDB-log' },
        SERVER_REQUIREMENTS.mariadb,
      ),
    ).toEqual([
      expect.stringContaining('the server is MariaDB 10.6.12; the schema needs MariaDB 10.8'),
    ]);
    expect(
      findProblems(
        { ...MYSQL_8, product: 'SQLite', version: '3.31.1' },
        SERVER_REQUIREMENTS.sqlite,
      ),
    ).toEqual([
      expect.stringContaining('the server is SQLite 3.31.1; the schema needs SQLite 3.35.0'),
    ]);
  });

  it('refuse a collation of another character set, no database, no utf8mb4, no InnoDB', () => {
    expect(
      findProblems(
        {
          ...MYSQL_8,
          database: null,
          hasCharset: false,
          collations: new Map([['utf8mb4_0900_bin', 'utf8mb3']]),
          innodb: 'DISABLED',
        },
        SERVER_REQUIREMENTS.mysql,
      ),
    ).toEqual([
      'the connection names no database: add one to the URL (mysql://user:pass@host:3306/DATABASE)',
      'the server has no utf8mb4 character set, which every table uses: use a server built with it',
      expect.stringContaining('has no utf8mb4 collation utf8mb4_0900_bin'),
      'the InnoDB storage engine is not available (DISABLED): every table needs it; enable it on the server',
    ]);
  });

  it('refuse tables left over, naming them and what to do', () => {
    expect(
      findProblems(
        { ...MARIADB_10_11, existingTables: ['spaces', 'sprints'] },
        SERVER_REQUIREMENTS.mariadb,
      ),
    ).toEqual([
      'the database already has tables this migration creates (spaces, sprints) and no record of ' +
        'the migration having run: left over from an earlier attempt that stopped half-way ' +
        "(MySQL/MariaDB), or another application's. If they are left over, `loyalty migrate " +
        '--repair` drops them when every one is empty and runs the migrations again; otherwise ' +
        'give the loyalty tables a database of their own',
    ]);
    expect(
      findProblems({ ...MYSQL_8, existingTables: ['admins'] }, SERVER_REQUIREMENTS.mysql),
    ).toEqual([expect.stringContaining('already has a table this migration creates (admins)')]);
  });
});
