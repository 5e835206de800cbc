import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { CsrfRejectedException } from './csrf-rejected.exception';
import type { DashboardRequest } from './dashboard-request';
import { SignInRequiredException } from './sign-in-required.exception';
import { DashboardPageException } from './dashboard-page.exception';
import { sendPage, sendSignInPage } from './page-answers';
import { setNotice } from './notices';
import { returnPathOf, safeReturnPath, signInPath } from './sign-in-return';
import { DashboardViews } from './dashboard-views.service';
import { INVITATION_PATH } from './accounts/members.service';
import { invitationFormExpiredPage } from './views/team-pages';

type PageRefusal = SignInRequiredException | CsrfRejectedException | DashboardPageException;

/** The dashboard pages' answers that are not their route's usual one, as pages or redirects. */
@Catch(SignInRequiredException, CsrfRejectedException, DashboardPageException)
export class DashboardPageFilter implements ExceptionFilter<PageRefusal> {
  constructor(private readonly views: DashboardViews) {}

  async catch(exception: PageRefusal, host: ArgumentsHost): Promise<FastifyReply> {
    const http = host.switchToHttp();
    const request = http.getRequest<DashboardRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (exception instanceof DashboardPageException)
      return sendPage(reply, exception.status, exception.page);
    if (exception instanceof SignInRequiredException) {
      // A form sent after the session ended: the sign-in page says so, and leads back to the
      // page of the form, where the browser puts back what was typed (see DASHBOARD_JS).
      if (request.method === 'POST') setNotice(request, reply, 'session-ended');
      return reply.redirect(signInPath(returnPathOf(request)), 303);
    }
    if (exception.against === 'sign-in-cookie' && request.url.startsWith(INVITATION_PATH)) {
      // The invitation form shares the sign-in form's token: a way back to a fresh form.
      const secret = request.url.slice(INVITATION_PATH.length).split('?')[0];
      if (/^[A-Za-z0-9_-]{1,100}$/.test(secret))
        return sendPage(reply, 403, invitationFormExpiredPage(`${INVITATION_PATH}${secret}`));
    }
    if (exception.against === 'sign-in-cookie') {
      const email = (request.body as Record<string, unknown> | undefined)?.email;
      const next = (request.body as Record<string, unknown> | undefined)?.next;
      return sendSignInPage(request, reply, 403, {
        error: 'The sign-in form expired. Please try again.',
        email: typeof email === 'string' ? email.trim() : '',
        next: safeReturnPath(next),
      });
    }
    // Only a signed-in session's token can be refused, so there is a session to render for.
    return sendPage(
      reply,
      403,
      await this.views.settings(request.dashboardSession!, {
        error: 'That form expired or came from another site. Please try again.',
      }),
    );
  }
}
