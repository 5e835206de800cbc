import { SetMetadata } from '@nestjs/common';

export const CSRF_PROTECTED = 'dashboard:csrf-protected';

export interface CsrfRule {
  /** Where the request carries its token: the `_csrf` form field or the `x-csrf-token` header. */
  from: 'form' | 'header';
  /** What it must match: the session's token, or the sign-in form's double-submit cookie. */
  against?: 'session' | 'sign-in-cookie';
}

/** A state-changing route: the CsrfGuard of its controller checks `rule` before the handler runs. */
export const CsrfProtected = (rule: CsrfRule) =>
  SetMetadata(CSRF_PROTECTED, { against: 'session', ...rule } satisfies CsrfRule);
