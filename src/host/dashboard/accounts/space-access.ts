import { ErrorCode } from '../../../common/errors/error-code';
import { LoyaltyException } from '../../../common/errors/loyalty.exception';
import type { SpacesService } from '../../../spaces/spaces.service';
import type { DashboardSession } from './sessions.service';
import type { Permission } from './roles';

/**
 * The space a request names, when the signed-in account may act on it with `permission`. A space
 * the account does not see answers SPACE_NOT_FOUND, as one that does not exist; a space it sees
 * without the permission answers PERMISSION_DENIED.
 */
export async function spaceFor(
  session: DashboardSession,
  spaces: SpacesService,
  id: unknown,
  permission: Permission,
): Promise<number> {
  const text = typeof id === 'number' ? String(id) : id;
  const spaceId = typeof text === 'string' && /^\d{1,10}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(spaceId) || !session.access.sees(spaceId)) {
    throw new LoyaltyException(ErrorCode.SPACE_NOT_FOUND);
  }
  if (!(await spaces.findSpace(spaceId))) throw new LoyaltyException(ErrorCode.SPACE_NOT_FOUND);
  if (!session.access.can(permission, spaceId)) {
    throw new LoyaltyException(ErrorCode.PERMISSION_DENIED);
  }
  return spaceId;
}

/** Refuses anyone but an operator. */
export function requireOperator(session: DashboardSession): void {
  if (!session.access.operator) throw new LoyaltyException(ErrorCode.PERMISSION_DENIED);
}
