import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Whether the machine's MariaDB answers a ping. */
export async function mariadbAlive(): Promise<boolean> {
  try {
    await run('mysqladmin', ['-uroot', '--silent', 'ping'], { timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
}

/** Polls `condition` until it holds, failing with `what` after `seconds`. */
export async function waitFor(
  condition: () => Promise<boolean>,
  seconds: number,
  what: string,
): Promise<void> {
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} within ${seconds} s`);
}

/** Stops the machine's MariaDB (the fault-injection specs start it again, always). */
export async function stopMariadb(): Promise<void> {
  await run('mysqladmin', ['-uroot', 'shutdown'], { timeout: 60_000 });
  await waitFor(async () => !(await mariadbAlive()), 60, 'MariaDB did not stop');
}

/** Starts it the way the machine and .ci/run do, and waits until it answers. */
export async function startMariadb(): Promise<void> {
  if (await mariadbAlive()) return;
  await run('start-stop-daemon', [
    '--start',
    '--oknodo',
    '--background',
    '--exec',
    '/usr/sbin/mariadbd',
  ]);
  await waitFor(mariadbAlive, 60, 'MariaDB did not start');
}
