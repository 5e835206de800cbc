import type { DataSource, EntityManager, QueryRunner } from 'typeorm';

/** Which server answers on the MySQL protocol. TypeORM's `mysql` driver talks to both. */
export type ServerFlavor = 'mysql' | 'mariadb';

/** The server a data source is connected to, as it answered `SELECT VERSION()`. */
export interface ServerIdentity {
  flavor: ServerFlavor;
  /** The whole answer, such as `8.0.36` or `10.11.6-MariaDB-0+deb12u1`. */
  version: string;
}

/**
 * The flavour a `VERSION()` answer names. MariaDB says so in it (some proxies prefix it with
 * `5.5.5-`, as MariaDB's own handshake does); MySQL and its builds never do.
 */
export function flavorOfVersion(version: string): ServerFlavor {
  return /mariadb/i.test(version) ? 'mariadb' : 'mysql';
}

/** Answers already given, per data source: the server behind a data source does not change. */
const identities = new WeakMap<DataSource, Promise<ServerIdentity>>();
const flavors = new WeakMap<DataSource, ServerFlavor>();

/**
 * Asks the server behind a MySQL-protocol data source which it is (once per data source), on the
 * query runner when one is given (a migration's, inside its transaction). The data source's
 * `type` is not evidence: hosts give `type: 'mysql'` for MariaDB all the time.
 */
export function identifyServer(
  source: DataSource | EntityManager | QueryRunner,
): Promise<ServerIdentity> {
  const dataSource = 'connection' in source ? source.connection : source;
  const known = identities.get(dataSource);
  if (known) return known;
  const asking = (async (): Promise<ServerIdentity> => {
    const rows = (await source.query('SELECT VERSION() AS version')) as Array<{ version: string }>;
    const version = String(rows[0]?.version ?? '');
    const identity = { flavor: flavorOfVersion(version), version };
    flavors.set(dataSource, identity.flavor);
    return identity;
  })();
  identities.set(dataSource, asking);
  // A failed question (the server was away) is asked again next time.
  void asking.catch(() => identities.delete(dataSource));
  return asking;
}

/** The flavour {@link identifyServer} has learnt for a data source, if it has asked yet. */
export function knownServerFlavor(dataSource: DataSource): ServerFlavor | undefined {
  return flavors.get(dataSource);
}
