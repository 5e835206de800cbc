import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { CsrfRejectedException } from './csrf-rejected.exception';
import { SignInRequiredException } from './sign-in-required.exception';
import { sendSettingsApiError } from './settings-api-error';

type SettingsApiRefusal = SignInRequiredException | CsrfRejectedException | LoyaltyException;

/** The settings API answers its refusals, the guards' and its handlers', in the error envelope. */
@Catch(SignInRequiredException, CsrfRejectedException, LoyaltyException)
export class SettingsApiFilter implements ExceptionFilter<SettingsApiRefusal> {
  catch(exception: SettingsApiRefusal, host: ArgumentsHost): FastifyReply {
    const http = host.switchToHttp();
    const [request, reply] = [http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>()];
    if (exception instanceof SignInRequiredException)
      return sendSettingsApiError(request, reply, ErrorCode.SIGN_IN_REQUIRED);
    if (exception instanceof CsrfRejectedException)
      return sendSettingsApiError(request, reply, ErrorCode.CSRF_CHECK_FAILED);
    return sendSettingsApiError(request, reply, exception.code, exception.message);
  }
}
