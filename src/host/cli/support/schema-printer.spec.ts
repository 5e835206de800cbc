import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_ONLY_PACKAGES } from './schema-printer';

describe('SERVICE_ONLY_PACKAGES', () => {
  it("are all declared by the standalone service's manifest, so its install has them", () => {
    const manifest = JSON.parse(
      readFileSync(
        join(__dirname, '..', '..', '..', '..', 'packages', 'service', 'package.json'),
        'utf8',
      ),
    ) as { dependencies: Record<string, string> };
    for (const name of SERVICE_ONLY_PACKAGES)
      expect(Object.keys(manifest.dependencies)).toContain(name);
  });
});
