import { ErrorCode } from '../errors/error-code';
import { LoyaltyException } from '../errors/loyalty.exception';

export const MAX_DISPLAY_NAME_LENGTH = 100;

/** Control characters (C0, DEL, C1) and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * A name people give to a thing they own (a token, a member), as it will be stored and shown:
 * trimmed, 1 to 100 characters, well-formed Unicode (no lone surrogate) and free of control
 * characters such as NUL. Anything else is INVALID_ARGUMENT naming `what` ("Token name").
 */
export function parseDisplayName(value: unknown, what: string): string {
  if (typeof value !== 'string') {
    throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, `${what} is required`);
  }
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.length > MAX_DISPLAY_NAME_LENGTH) {
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      `${what} must be 1 to ${MAX_DISPLAY_NAME_LENGTH} characters`,
    );
  }
  if (LONE_SURROGATE.test(trimmed)) {
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      `${what} must be valid Unicode text (it holds a lone surrogate)`,
    );
  }
  if (CONTROL.test(trimmed)) {
    throw new LoyaltyException(
      ErrorCode.INVALID_ARGUMENT,
      `${what} must not contain control characters (such as NUL or a line break)`,
    );
  }
  return trimmed;
}
