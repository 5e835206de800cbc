import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { AdminInputError } from './accounts/admins.service';
import { CsrfRejectedException } from './csrf-rejected.exception';
import { SignInRequiredException } from './sign-in-required.exception';
import { sendSettingsApiError } from './settings-api-error';

type SettingsApiRefusal =
  SignInRequiredException | CsrfRejectedException | LoyaltyException | AdminInputError;

/** The settings API answers its refusals, the guards' and its handlers', in the error envelope. */
@Catch(SignInRequiredException, CsrfRejectedException, LoyaltyException, AdminInputError)
export class SettingsApiFilter implements ExceptionFilter<SettingsApiRefusal> {
  catch(exception: SettingsApiRefusal, host: ArgumentsHost): FastifyReply {
    const http = host.switchToHttp();
    const [request, reply] = [http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>()];
    if (exception instanceof SignInRequiredException)
      return sendSettingsApiError(request, reply, ErrorCode.SIGN_IN_REQUIRED);
    if (exception instanceof CsrfRejectedException)
      return sendSettingsApiError(request, reply, ErrorCode.CSRF_CHECK_FAILED);
    if (exception instanceof AdminInputError)
      return sendSettingsApiError(request, reply, ErrorCode.INVALID_ARGUMENT, exception.message);
    return sendSettingsApiError(request, reply, exception.code, exception.message);
  }
}
