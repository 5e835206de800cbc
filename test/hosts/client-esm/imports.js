// What compiling means for plain JavaScript: the package's ESM entry links with every name the
// test imports (a missing export fails here, before any request).
import { createClient, LoyaltyApiError } from 'loyalty-leaderboard-client';

if (typeof createClient !== 'function' || typeof LoyaltyApiError !== 'function') {
  throw new Error('loyalty-leaderboard-client does not export createClient and LoyaltyApiError');
}
console.log('loyalty-leaderboard-client links as an ES module');
