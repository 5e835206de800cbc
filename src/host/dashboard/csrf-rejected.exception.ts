import type { CsrfRule } from './csrf-protected.decorator';

/** A state change without the right CSRF token; `against` tells the filter which page to show. */
export class CsrfRejectedException extends Error {
  constructor(readonly against: NonNullable<CsrfRule['against']>) {
    super('Cross-site request refused');
    this.name = 'CsrfRejectedException';
  }
}
