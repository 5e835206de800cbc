import type { AccessTokenInfo, AccessTokensService } from '../../../auth/access-tokens.service';
import type { DashboardSession } from './sessions.service';

/** The tokens an account manages: every one for an operator, its owned spaces' for an owner. */
export function visibleTokens(
  tokens: AccessTokensService,
  session: DashboardSession,
): Promise<AccessTokenInfo[]> {
  const owned = session.access.spacesWith('space.manage');
  if (owned === undefined) return tokens.list();
  return owned.length === 0 ? Promise.resolve([]) : tokens.list({ spaceIds: owned });
}

/** A token as the audit trail names it: its name and display prefix, never its value. */
export const tokenTarget = (token: Pick<AccessTokenInfo, 'name' | 'prefix'>) =>
  `${token.name} (${token.prefix}…)`;

/** What an audit entry says of a leaving member's tokens: the ones revoked, or that they stay. */
export function tokensDetail(
  revoked: readonly AccessTokenInfo[],
  kept: boolean,
): { tokens: 'kept' } | { revokedTokens: string[] } {
  return kept ? { tokens: 'kept' } : { revokedTokens: revoked.map((token) => tokenTarget(token)) };
}
