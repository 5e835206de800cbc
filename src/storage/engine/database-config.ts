/** A database as the operator names it (DATABASE_URL): an embedded file, or a server. */
export type DatabaseConfig = SqliteConfig | ServerConfig;

export interface SqliteConfig {
  kind: 'sqlite';
  /** An absolute path, or `:memory:`. */
  file: string;
}

/** A database server: MySQL or MariaDB, or PostgreSQL. */
export interface ServerConfig {
  kind: 'mysql' | 'postgres';
  host: string;
  port: number;
  username: string;
  password: string;
  database: string;
  /**
   * PostgreSQL's `sslmode` (disable, require, verify-full): `require` encrypts without checking the
   * server's certificate, `verify-full` checks it against the system's CAs. Absent: no TLS.
   */
  tls?: 'disable' | 'require' | 'verify-full';
}

/** Whether a database is a server (and so may have read replicas). */
export function isServerConfig(config: DatabaseConfig): config is ServerConfig {
  return 'host' in config;
}
