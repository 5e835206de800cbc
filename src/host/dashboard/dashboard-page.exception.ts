import type { SafeHtml } from './views/html';

/**
 * A page answered with another status than its route's (a 404, a refused form): Nest would reset
 * a status set in the handler, so the DashboardPageFilter sends it.
 */
export class DashboardPageException extends Error {
  constructor(
    readonly status: number,
    readonly page: SafeHtml,
  ) {
    super(`Dashboard page answered with ${status}`);
    this.name = 'DashboardPageException';
  }
}
