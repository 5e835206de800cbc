import { Injectable } from '@nestjs/common';
import type { RateLimitRule } from '../rate-limit/rate-limit-rules';
import { RateLimiter } from '../rate-limit/rate-limiter.service';

/**
 * Sign-in limits. Every attempt spends its client address's budget (50 in 15 minutes: room for an
 * office behind one address, not for a sweep). Only failures spend an account's: 10 per email from
 * one address, 100 per email from anywhere, so guessing stops while nobody elsewhere can lock the
 * real admin out with ten wrong passwords.
 */
const SIGN_IN_RULES = {
  address: [{ name: 'sign-in-address', limit: 50, ttlMs: 15 * 60_000 }],
  emailFromAddress: [{ name: 'sign-in-failures', limit: 10, ttlMs: 15 * 60_000 }],
  email: [{ name: 'sign-in-failures-any', limit: 100, ttlMs: 15 * 60_000 }],
};
const FAILED_SIGN_IN_DELAY_MS = 500;

/** The sign-in form's rate limits; each method answers the seconds to wait, 0 when allowed. */
@Injectable()
export class SignInThrottle {
  constructor(private readonly limiter: RateLimiter) {}

  /** Before the password is checked: spends the address's budget, and refuses a blocked account. */
  async admit(address: string, email: string): Promise<number> {
    const decision = await this.limiter.consume(
      `sign-in:address:${address}`,
      SIGN_IN_RULES.address,
    );
    if (decision && !decision.allowed) return decision.retryAfterSeconds;
    for (const [key] of failureKeys(address, email)) {
      const blockedFor = this.limiter.blockedFor(key);
      if (blockedFor > 0) return blockedFor;
    }
    return 0;
  }

  /** After a wrong password: a pause, then the account's budgets are spent. */
  async failed(address: string, email: string): Promise<number> {
    await new Promise((resolve) => setTimeout(resolve, FAILED_SIGN_IN_DELAY_MS));
    for (const [key, rules] of failureKeys(address, email)) {
      const decision = await this.limiter.consume(key, rules);
      if (decision && !decision.allowed) return decision.retryAfterSeconds;
    }
    return 0;
  }
}

function failureKeys(address: string, email: string): Array<[string, RateLimitRule[]]> {
  const account = email.toLowerCase();
  return [
    [`sign-in:failures:${account}:${address}`, SIGN_IN_RULES.emailFromAddress],
    [`sign-in:failures:${account}`, SIGN_IN_RULES.email],
  ];
}
