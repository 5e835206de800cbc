import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { waitFor } from './mariadb-server';

const run = promisify(execFile);

/** The machine's cluster (Debian's pg_ctlcluster names it by version and name). */
function cluster(): [string, string] {
  const versions = readdirSync('/etc/postgresql').sort();
  return [versions[versions.length - 1], 'main'];
}

/** Whether the machine's PostgreSQL accepts connections on 127.0.0.1:5432. */
export async function postgresAlive(): Promise<boolean> {
  try {
    await run('pg_isready', ['-h', '127.0.0.1', '-p', '5432', '-t', '2'], { timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
}

/** Stops the machine's PostgreSQL, its connections cut (the fault specs start it again, always). */
export async function stopPostgres(): Promise<void> {
  await run('pg_ctlcluster', ['--skip-systemctl-redirect', ...cluster(), 'stop', '-m', 'fast'], {
    timeout: 60_000,
  });
  await waitFor(async () => !(await postgresAlive()), 60, 'PostgreSQL did not stop');
}

/** Starts it as the machine and .ci/run do, and waits until it answers. */
export async function startPostgres(): Promise<void> {
  if (await postgresAlive()) return;
  await run('pg_ctlcluster', ['--skip-systemctl-redirect', ...cluster(), 'start'], {
    timeout: 60_000,
  });
  await waitFor(postgresAlive, 60, 'PostgreSQL did not start');
}
