import { randomBytes } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { dialectOf } from '../../storage/engines';
import { HostSecretEntity } from './host-secret.entity';
import { query } from '../../storage/statements';

/** How many random bytes a generated secret has. */
const SECRET_BYTES = 32;

/**
 * The secret named `name`, the same for every instance sharing the database: the first to ask
 * generates it. Instances that start together race to insert theirs; the insert is ignored for
 * all but one, and everyone then reads the one kept. A failure says what to check first.
 */
export async function loadHostSecret(dataSource: DataSource, name: string): Promise<Buffer> {
  try {
    return await readOrCreate(dataSource, name);
  } catch (error) {
    throw new Error(
      `The dashboard could not load its key "${name}" from host_secrets (${(error as Error).message}); are the migrations applied (npm run cli -- migrate)?`,
    );
  }
}

async function readOrCreate(dataSource: DataSource, name: string): Promise<Buffer> {
  const secrets = dataSource.getRepository(HostSecretEntity);
  let stored = await secrets.findOneBy({ name });
  if (!stored) {
    await query(
      dataSource,
      dialectOf(dataSource).insertIgnore('host_secrets', ['name', 'value'], 1),
      [name, randomBytes(SECRET_BYTES).toString('base64')],
    );
    stored = await secrets.findOneByOrFail({ name });
  }
  return Buffer.from(stored.value, 'base64');
}
