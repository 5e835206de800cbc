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

/**
 * The sign-in form's rate limits. An attempt spends a failure of the account's budgets before its
 * password is checked, and gets it back when the password is right: the store's atomic spend is
 * what stops a burst, so attempts sent at once can never check more passwords than the budget.
 */
@Injectable()
export class SignInThrottle {
  constructor(private readonly limiter: RateLimiter) {}

  /**
   * Before the password is checked: spends the address's budget and one failure of each of the
   * account's. Answers the seconds to wait when any is spent already (nothing of the account's is
   * kept then), 0 when the password may be checked.
   */
  async admit(address: string, email: string): Promise<number> {
    const decision = await this.limiter.consume(
      `sign-in:address:${address}`,
      SIGN_IN_RULES.address,
    );
    if (decision && !decision.allowed) return decision.retryAfterSeconds;
    const spent: Array<[string, RateLimitRule[]]> = [];
    for (const [key, rules] of failureKeys(address, email)) {
      const failure = await this.limiter.consume(key, rules);
      if (failure && !failure.allowed) {
        for (const [spentKey, spentRules] of spent)
          await this.limiter.release(spentKey, spentRules);
        return failure.retryAfterSeconds;
      }
      spent.push([key, rules]);
    }
    return 0;
  }

  /** After a wrong password: a pause (the failure was counted by admit). */
  async failed(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, FAILED_SIGN_IN_DELAY_MS));
  }

  /** After the right password: the failure admit counted in advance is given back. */
  async succeeded(address: string, email: string): Promise<void> {
    for (const [key, rules] of failureKeys(address, email)) await this.limiter.release(key, rules);
  }
}

function failureKeys(address: string, email: string): Array<[string, RateLimitRule[]]> {
  const account = email.toLowerCase();
  return [
    [`sign-in:failures:${account}:${address}`, SIGN_IN_RULES.emailFromAddress],
    [`sign-in:failures:${account}`, SIGN_IN_RULES.email],
  ];
}
