import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AccessTokensService } from '../../auth/access-tokens.service';
import { CsrfRejectedException } from './csrf-rejected.exception';
import type { DashboardRequest } from './dashboard-request';
import { SignInRequiredException } from './sign-in-required.exception';
import { DashboardPageException } from './dashboard-page.exception';
import { sendPage, sendSignInPage } from './page-answers';
import { settingsPage } from './views/pages';

type PageRefusal = SignInRequiredException | CsrfRejectedException | DashboardPageException;

/** The dashboard pages' answers that are not their route's usual one, as pages or redirects. */
@Catch(SignInRequiredException, CsrfRejectedException, DashboardPageException)
export class DashboardPageFilter implements ExceptionFilter<PageRefusal> {
  constructor(private readonly tokens: AccessTokensService) {}

  async catch(exception: PageRefusal, host: ArgumentsHost): Promise<FastifyReply> {
    const http = host.switchToHttp();
    const request = http.getRequest<DashboardRequest>();
    const reply = http.getResponse<FastifyReply>();
    if (exception instanceof DashboardPageException)
      return sendPage(reply, exception.status, exception.page);
    if (exception instanceof SignInRequiredException)
      return reply.redirect('/dashboard/sign-in', 303);
    if (exception.against === 'sign-in-cookie') {
      const email = (request.body as Record<string, unknown> | undefined)?.email;
      return sendSignInPage(
        request,
        reply,
        403,
        'The sign-in form expired. Please try again.',
        typeof email === 'string' ? email.trim() : '',
      );
    }
    // Only a signed-in session's token can be refused, so there is a session to render for.
    return sendPage(
      reply,
      403,
      settingsPage(request.dashboardSession!, {
        tokens: await this.tokens.list(),
        error: 'That form expired or came from another site. Please try again.',
      }),
    );
  }
}
