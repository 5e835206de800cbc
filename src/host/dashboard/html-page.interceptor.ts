import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { map, Observable } from 'rxjs';
import { PAGE_HEADERS } from './page-answers';
import { SafeHtml } from './views/html';

/** A handler's page (SafeHtml) goes out with the page headers; errors never get them this way. */
@Injectable()
export class HtmlPageInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    return next.handle().pipe(
      map((result: unknown) => {
        if (!(result instanceof SafeHtml)) return result;
        void reply.headers(PAGE_HEADERS);
        return result.toString();
      }),
    );
  }
}
