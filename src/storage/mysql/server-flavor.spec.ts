import type { DataSource, QueryRunner } from 'typeorm';
import type { FactoryProvider } from '@nestjs/common';
import { flavorOfVersion, identifyServer, knownServerFlavor } from './server-flavor';
import type { SqlDialect } from '../dialect/sql-dialect';
import { dialectOf, resolveDialect } from '../engines';
import { sqlDialectProvider } from '../sql-dialect.provider';

/** A data source of this type whose server answers `SELECT VERSION()` with `version`. */
function answering(type: 'mysql' | 'mariadb', version: string) {
  const asked: string[] = [];
  const dataSource = {
    options: { type },
    query: (sql: string) => {
      asked.push(sql);
      return Promise.resolve([{ version }]);
    },
  } as unknown as DataSource;
  return { dataSource, asked };
}

describe('flavorOfVersion', () => {
  it.each([
    ['8.0.36', 'mysql'],
    ['8.4.3-commercial', 'mysql'],
    ['9.1.0', 'mysql'],
    ['10.11.19-MariaDB-0+deb12u1', 'mariadb'],
    ['11.4.2-MariaDB-ubu2404-log', 'mariadb'],
    ['5.5.5-10.6.12-MariaDB', 'mariadb'],
  ])('names %s %s', (version, flavor) => {
    expect(flavorOfVersion(version)).toBe(flavor);
  });
});

describe('the dialect of a MySQL-protocol data source', () => {
  it("follows the server that answers, whatever the data source's type says", async () => {
    const mariadbAsMysql = answering('mysql', '10.11.19-MariaDB-0+deb12u1');
    const mysqlAsMariadb = answering('mariadb', '8.0.36');
    expect((await resolveDialect(mariadbAsMysql.dataSource)).upsertReturning).toBe(true);
    expect((await resolveDialect(mysqlAsMariadb.dataSource)).upsertReturning).toBe(false);
  });

  it('is injected as the server says', async () => {
    const { useFactory } = sqlDialectProvider as FactoryProvider<SqlDialect>;
    const { dataSource } = answering('mysql', '10.11.19-MariaDB-0+deb12u1');
    expect((await useFactory(dataSource)).upsertReturning).toBe(true);
  });

  it("is MySQL's, which both servers speak, until the server has been asked", async () => {
    const { dataSource } = answering('mariadb', '10.11.19-MariaDB');
    expect(knownServerFlavor(dataSource)).toBeUndefined();
    expect(dialectOf(dataSource).upsertReturning).toBe(false);
    await resolveDialect(dataSource);
    expect(knownServerFlavor(dataSource)).toBe('mariadb');
    expect(dialectOf(dataSource).upsertReturning).toBe(true);
  });

  it('asks the server once per data source', async () => {
    const { dataSource, asked } = answering('mysql', '8.0.36');
    await Promise.all([identifyServer(dataSource), identifyServer(dataSource)]);
    // A query runner of the same data source (a migration's) is answered from what was learnt.
    const runner = {
      connection: dataSource,
      query: (sql: string) => dataSource.query(sql),
    } as unknown as QueryRunner;
    await identifyServer(runner);
    expect(asked).toEqual(['SELECT VERSION() AS version']);
  });

  it('asks again after a question that failed', async () => {
    let calls = 0;
    const dataSource = {
      options: { type: 'mysql' },
      query: () =>
        ++calls === 1
          ? Promise.reject(new Error('connect ECONNREFUSED'))
          : Promise.resolve([{ version: '8.0.36' }]),
    } as unknown as DataSource;
    await expect(identifyServer(dataSource)).rejects.toThrow('ECONNREFUSED');
    await expect(identifyServer(dataSource)).resolves.toEqual({
      flavor: 'mysql',
      version: '8.0.36',
    });
  });
});
