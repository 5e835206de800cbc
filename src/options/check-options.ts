import type { LoyaltyModuleOptions } from './loyalty-module-options.interface';

/** Options that cannot work, refused when the module starts: each problem names its option. */
export class LoyaltyOptionsError extends Error {
  override readonly name = 'LoyaltyOptionsError';

  constructor(readonly problems: readonly string[]) {
    super(`LoyaltyModule options refused: ${problems.join('; ')}.`);
  }
}

/** A whole number option's bounds, as the standalone service's settings have them. */
const WHOLE_NUMBERS: ReadonlyArray<{
  path: string;
  read: (options: LoyaltyModuleOptions) => unknown;
  min: number;
  max: number;
}> = [
  { path: 'ingestMaxRecords', read: (o) => o.ingestMaxRecords, min: 1, max: 100_000 },
  { path: 'rankIndex.maxEntries', read: (o) => o.rankIndex?.maxEntries, min: 0, max: 1e9 },
  {
    path: 'rankIndex.pollIntervalMs',
    read: (o) => o.rankIndex?.pollIntervalMs,
    min: 10,
    max: 86_400_000,
  },
  { path: 'boardExport.maxConcurrent', read: (o) => o.boardExport?.maxConcurrent, min: 1, max: 32 },
  {
    path: 'boardExport.stallTimeoutMs',
    read: (o) => o.boardExport?.stallTimeoutMs,
    min: 100,
    max: 3_600_000,
  },
];

const REPLICA_TLS = ['disable', 'require', 'verify-full'];

/**
 * Checks the module's options when it starts, so that a mistake stops the host at boot with the
 * option's name rather than failing every request that meets it later (a short cursorSecret would
 * make every page an internal error). Answers the options, or throws {@link LoyaltyOptionsError}
 * listing every problem.
 */
export function checkLoyaltyOptions(options: LoyaltyModuleOptions): LoyaltyModuleOptions {
  const problems: string[] = [];
  const secret: unknown = options.cursorSecret;
  // '' is unset, as the cursors read it: a host's empty CURSOR_SECRET keeps the generated one.
  if (secret !== undefined && secret !== '' && (typeof secret !== 'string' || secret.length < 32)) {
    problems.push(
      typeof secret === 'string'
        ? `cursorSecret has ${secret.length} characters: give at least 32, the same on every instance, or leave it out to have one generated and kept in the database`
        : 'cursorSecret must be a string of at least 32 characters',
    );
  }
  for (const { path, read, min, max } of WHOLE_NUMBERS) {
    const value = read(options);
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
      problems.push(`${path} must be a whole number from ${min} to ${max}, not ${show(value)}`);
  }
  if (options.migrationsRun !== undefined && typeof options.migrationsRun !== 'boolean')
    problems.push(`migrationsRun must be true or false, not ${show(options.migrationsRun)}`);
  const replicas: unknown = options.readReplicas;
  if (replicas !== undefined && !Array.isArray(replicas)) {
    problems.push('readReplicas must be a list of connections');
  } else {
    ((replicas ?? []) as Array<Record<string, unknown> | null>).forEach((replica, index) => {
      const where = `readReplicas[${index}]`;
      for (const field of ['host', 'user', 'database'] as const) {
        const value: unknown = replica?.[field];
        if (typeof value !== 'string' || value === '')
          problems.push(`${where}.${field} must be a non-empty string`);
      }
      const port: unknown = replica?.port;
      if (
        port !== undefined &&
        !(Number.isInteger(port) && Number(port) >= 1 && Number(port) <= 65535)
      )
        problems.push(`${where}.port must be a port number (1 to 65535), not ${show(port)}`);
      const tls: unknown = replica?.tls;
      if (tls !== undefined && !REPLICA_TLS.includes(tls as string))
        problems.push(`${where}.tls must be one of ${REPLICA_TLS.join(', ')}, not ${show(tls)}`);
    });
  }
  if (problems.length > 0) throw new LoyaltyOptionsError(problems);
  return options;
}

function show(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}
