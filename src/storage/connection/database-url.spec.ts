import { resolve } from 'node:path';
import { DEFAULT_DATABASE_URL, parseDatabaseUrl, redact } from './database-url';

const CWD = '/srv/app';

function errorOf(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error, nothing was thrown');
}

describe('parseDatabaseUrl', () => {
  describe('sqlite', () => {
    it('resolves a relative path against the working directory', () => {
      expect(parseDatabaseUrl('sqlite:./data/loyalty.sqlite', CWD)).toEqual({
        kind: 'sqlite',
        file: '/srv/app/data/loyalty.sqlite',
      });
      expect(parseDatabaseUrl('sqlite:db.sqlite', CWD)).toEqual({
        kind: 'sqlite',
        file: '/srv/app/db.sqlite',
      });
      expect(parseDatabaseUrl('sqlite:../other/db.sqlite', CWD)).toEqual({
        kind: 'sqlite',
        file: '/srv/other/db.sqlite',
      });
    });

    it('uses process.cwd() when no working directory is given', () => {
      expect(parseDatabaseUrl('sqlite:x.sqlite')).toEqual({
        kind: 'sqlite',
        file: resolve(process.cwd(), 'x.sqlite'),
      });
    });

    it('keeps an absolute path', () => {
      expect(parseDatabaseUrl('sqlite:/var/lib/loyalty.sqlite', CWD)).toEqual({
        kind: 'sqlite',
        file: '/var/lib/loyalty.sqlite',
      });
    });

    it('reads the sqlite:///absolute form as an absolute path', () => {
      expect(parseDatabaseUrl('sqlite:///var/lib/loyalty.sqlite', CWD)).toEqual({
        kind: 'sqlite',
        file: '/var/lib/loyalty.sqlite',
      });
    });

    it('reads sqlite::memory:', () => {
      expect(parseDatabaseUrl('sqlite::memory:', CWD)).toEqual({
        kind: 'sqlite',
        file: ':memory:',
      });
    });

    it('refuses sqlite:// with a host, which would put the file at the root', () => {
      expect(errorOf(() => parseDatabaseUrl('sqlite://./data/x.sqlite', CWD)).message).toMatch(
        /DATABASE_URL.*names a host.*sqlite:\.\/relative\/path/,
      );
      expect(errorOf(() => parseDatabaseUrl('sqlite://data/x.sqlite', CWD)).message).toMatch(
        /names a host/,
      );
    });

    it('refuses sqlite: without a path', () => {
      expect(errorOf(() => parseDatabaseUrl('sqlite:', CWD)).message).toMatch(/DATABASE_URL.*path/);
    });

    it('has a default under ./data', () => {
      expect(DEFAULT_DATABASE_URL).toBe('sqlite:./data/loyalty.sqlite');
      expect(parseDatabaseUrl(DEFAULT_DATABASE_URL, CWD)).toEqual({
        kind: 'sqlite',
        file: '/srv/app/data/loyalty.sqlite',
      });
    });
  });

  describe('mysql and mariadb', () => {
    it('reads user, password, host, port and database', () => {
      expect(parseDatabaseUrl('mysql://loyal:s3cret@db.example.com:3307/loyalty', CWD)).toEqual({
        kind: 'mysql',
        host: 'db.example.com',
        port: 3307,
        username: 'loyal',
        password: 's3cret',
        database: 'loyalty',
      });
    });

    it('reads a mariadb:// URL the same way', () => {
      expect(parseDatabaseUrl('mariadb://loyal:s3cret@10.0.0.5:3308/points', CWD)).toEqual({
        kind: 'mysql',
        host: '10.0.0.5',
        port: 3308,
        username: 'loyal',
        password: 's3cret',
        database: 'points',
      });
    });

    it('defaults the port to 3306 and the user to root, with an empty password', () => {
      expect(parseDatabaseUrl('mysql://db/loyalty', CWD)).toEqual({
        kind: 'mysql',
        host: 'db',
        port: 3306,
        username: 'root',
        password: '',
        database: 'loyalty',
      });
    });

    it('keeps an explicit port 3306 and a user without password', () => {
      expect(parseDatabaseUrl('mysql://app@db:3306/loyalty', CWD)).toMatchObject({
        port: 3306,
        username: 'app',
        password: '',
      });
    });

    it('decodes percent-encoded user, password and database', () => {
      expect(parseDatabaseUrl('mysql://us%40er:p%40ss%3Aw%2Fd@db/my%20db', CWD)).toMatchObject({
        username: 'us@er',
        password: 'p@ss:w/d',
        database: 'my db',
      });
    });

    it('ignores query parameters when reading the database name', () => {
      expect(parseDatabaseUrl('mysql://u:p@db:3306/loyalty?ssl=true', CWD)).toMatchObject({
        database: 'loyalty',
      });
    });

    it.each(['mysql://u:p@db:3306', 'mysql://u:p@db:3306/', 'mariadb://db/'])(
      'refuses %s: the database name is missing',
      (url) => {
        expect(errorOf(() => parseDatabaseUrl(url, CWD)).message).toMatch(
          /database name is missing/,
        );
      },
    );
  });

  describe('postgres and postgresql', () => {
    it('reads user, password, host, port and database', () => {
      expect(parseDatabaseUrl('postgres://loyal:s3cret@db.example.com:5433/loyalty', CWD)).toEqual({
        kind: 'postgres',
        host: 'db.example.com',
        port: 5433,
        username: 'loyal',
        password: 's3cret',
        database: 'loyalty',
      });
      expect(parseDatabaseUrl('postgresql://loyal@10.0.0.5/points', CWD)).toMatchObject({
        kind: 'postgres',
        host: '10.0.0.5',
        port: 5432,
        database: 'points',
      });
    });

    it('defaults the port to 5432 and the user to postgres, and decodes percent-encoding', () => {
      expect(parseDatabaseUrl('postgres://db/my%20db', CWD)).toEqual({
        kind: 'postgres',
        host: 'db',
        port: 5432,
        username: 'postgres',
        password: '',
        database: 'my db',
      });
    });

    it('reads sslmode as libpq spells it, and refuses other parameters and modes', () => {
      expect(parseDatabaseUrl('postgres://db/x?sslmode=require', CWD)).toMatchObject({
        tls: 'require',
      });
      expect(parseDatabaseUrl('postgres://db/x?sslmode=verify-full', CWD)).toMatchObject({
        tls: 'verify-full',
      });
      expect(errorOf(() => parseDatabaseUrl('postgres://db/x?sslmode=prefer', CWD)).message).toBe(
        'DATABASE_URL: sslmode must be one of disable, require, verify-full (got "prefer")',
      );
      expect(errorOf(() => parseDatabaseUrl('postgres://db/x?schema=app', CWD)).message).toBe(
        'DATABASE_URL: unknown parameter "schema"; only sslmode is read',
      );
    });

    it.each(['postgres://u:p@db:5432', 'postgres://u:p@db/', 'postgresql:///x'])(
      'refuses %s: the database or the server is missing',
      (url) => {
        expect(errorOf(() => parseDatabaseUrl(url, CWD)).message).toMatch(
          /^DATABASE_URL: the (database name|server) is missing/,
        );
      },
    );

    it('does not reveal the password in the error for an unreadable URL', () => {
      const error = errorOf(() => parseDatabaseUrl('postgres://admin:TopSecret99@db:99999/x', CWD));
      expect(error.message).toMatch(/^DATABASE_URL: cannot read/);
      expect(error.message).not.toContain('TopSecret99');
    });
  });

  describe('unsupported and garbage', () => {
    it.each([
      'oracle://u:p@db:1521/x',
      'http://db/x',
      'file:///tmp/x.sqlite',
      'redis://localhost:6379/0',
    ])('refuses the scheme of %s', (url) => {
      const error = errorOf(() => parseDatabaseUrl(url, CWD));
      expect(error.message).toMatch(/unsupported scheme/);
      expect(error.message).toContain(url.slice(0, url.indexOf(':') + 1));
    });

    it.each(['', 'not a url', 'localhost:3306/db', '://x', 'mysql//u:p@db/x'])(
      'refuses garbage %p',
      (url) => {
        expect(errorOf(() => parseDatabaseUrl(url, CWD)).message).toMatch(/^DATABASE_URL/);
      },
    );

    it('does not reveal the password in the error for an unreadable URL', () => {
      const error = errorOf(() =>
        parseDatabaseUrl('mysql://admin:TopSecret99@db:99999/loyalty', CWD),
      );
      expect(error.message).toMatch(/^DATABASE_URL/);
      expect(error.message).not.toContain('TopSecret99');
      expect(error.message).toContain('admin');
    });

    it('does not reveal the password for an unsupported scheme', () => {
      const error = errorOf(() => parseDatabaseUrl('oracle://admin:TopSecret99@db/loyalty', CWD));
      expect(error.message).not.toContain('TopSecret99');
    });
  });
});

describe('redact', () => {
  it('replaces the password of a URL', () => {
    expect(redact('mysql://loyal:s3cret@db.example.com:3307/loyalty')).toBe(
      'mysql://loyal:***@db.example.com:3307/loyalty',
    );
    expect(redact('mariadb://u:p%40ss@db/x')).toBe('mariadb://u:***@db/x');
  });

  it('keeps URLs without a password as they are', () => {
    expect(redact('mysql://db/loyalty')).toBe('mysql://db/loyalty');
    expect(redact('mysql://root@db/loyalty')).toBe('mysql://root@db/loyalty');
    expect(redact('sqlite:./data/loyalty.sqlite')).toBe('sqlite:./data/loyalty.sqlite');
    expect(redact('sqlite::memory:')).toBe('sqlite::memory:');
  });

  it('hides an empty-user password', () => {
    // parseDatabaseUrl accepts this URL (user root, password "TopSecret99").
    expect(parseDatabaseUrl('mysql://:TopSecret99@db/loyalty', CWD)).toMatchObject({
      password: 'TopSecret99',
    });
    expect(redact('mysql://:TopSecret99@db/loyalty')).not.toContain('TopSecret99');
  });

  it('hides all of a password that contains an unencoded @', () => {
    // WHATWG URL parsing splits at the last @, so parseDatabaseUrl accepts this URL with password "Top@Secret99".
    expect(parseDatabaseUrl('mysql://app:Top@Secret99@db/loyalty', CWD)).toMatchObject({
      password: 'Top@Secret99',
    });
    expect(redact('mysql://app:Top@Secret99@db/loyalty')).not.toContain('Secret99');
  });
});
