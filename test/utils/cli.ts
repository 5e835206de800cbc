import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const CLI = join(__dirname, '..', '..', 'dist', 'src', 'host', 'cli', 'main.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built command line (`npm run build` first; the README's test command does). */
export function runCli(
  args: string[],
  env: Record<string, string | undefined>,
  input?: string,
  cwd?: string,
): Promise<CliResult> {
  if (!existsSync(CLI))
    throw new Error(`${CLI} is missing: run "npm run build" before the e2e specs`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, ...env },
      ...(cwd ? { cwd } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}
