import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { AdminInputError } from './accounts/admins.service';
import { settingsApiStatus } from './settings-api-error';

/**
 * A form's refusal as a page shows it: the status the settings endpoint answers for the same
 * refusal, and its message. Null for anything else, which is no refusal but a fault.
 */
export function refusalOf(error: unknown): { status: number; message: string } | null {
  if (error instanceof AdminInputError) return { status: 400, message: error.message };
  if (error instanceof LoyaltyException)
    return { status: settingsApiStatus(error.code), message: error.message };
  return null;
}
