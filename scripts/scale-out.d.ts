// Types of scripts/scale-out.js, for the TypeScript specs that drive it.

export interface ScaleOutOptions {
  /** Service instances (default 3). */
  instances?: number;
  /** 'mariadb' (a private primary and replica, the default) or 'sqlite' (one file). */
  database?: 'mariadb' | 'sqlite';
  /** On MariaDB: pass the replica as DATABASE_REPLICA_URLS (default true). */
  replica?: boolean;
  /** Shared rate limits; null: none (each instance limits alone). Default: SCALE_OUT_REDIS_URL. */
  redisUrl?: string | null;
  /** Start haproxy in front of the instances (default true). */
  balancer?: boolean;
  balancerPort?: number;
  /** Added to every instance's environment. */
  env?: Record<string, string>;
  /** Leave the temporary folder (logs, data) after stop(). */
  keep?: boolean;
  log?: (line: string) => void;
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface ScaleOutInstance {
  name: string;
  port: number;
  /** http://127.0.0.1:port, without a path. */
  url: string;
  logFile: string;
  readonly pid: number | undefined;
  readonly running: boolean;
  start(): Promise<void>;
  /** SIGKILL by default: a crash, no shutdown. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
  restart(): Promise<void>;
}

export interface Topology {
  dir: string;
  database: 'mariadb' | 'sqlite';
  databaseUrl: string;
  replicaUrls: string[];
  redisUrl: string | null;
  cursorSecret: string;
  instances: ScaleOutInstance[];
  balancer: { port: number; url: string; configFile: string; logFile: string } | null;
  cli(args: string[], input?: string): Promise<CommandResult>;
  /** MariaDB only: a statement as root in the service's database on the primary or the replica. */
  sql(server: 'primary' | 'replica', statement: string, params?: unknown[]): Promise<any>;
  stop(): Promise<void>;
}

export const DEFAULT_REDIS_URL: string;
export function findExecutable(name: string): string | null;
export function missingPrerequisites(options?: {
  database?: 'mariadb' | 'sqlite';
  balancer?: boolean;
}): string[];
export function startTopology(options?: ScaleOutOptions): Promise<Topology>;
