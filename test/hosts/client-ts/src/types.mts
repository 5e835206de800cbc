// The package's "import" types: this file is an ES module (.mts), the rest of the project
// CommonJS, so the build type-checks both halves of the package's "exports".
import { createClient, LoyaltyApiError } from 'loyalty-leaderboard-client';
import type { ClientOptions, Entry, Page } from 'loyalty-leaderboard-client';

export async function firstPage(options: ClientOptions, spaceId: number): Promise<Entry[]> {
  const page: Page = await createClient(options).page(spaceId);
  return page.list;
}

export function isApiError(error: unknown): error is LoyaltyApiError {
  return error instanceof LoyaltyApiError;
}
