import { Injectable } from '@nestjs/common';
import { ErrorCode } from '../../common/errors/error-code';
import { LoyaltyException } from '../../common/errors/loyalty.exception';
import { AdminInputError, AdminsService, MAX_PASSWORD_LENGTH } from './accounts/admins.service';
import { verifyPassword } from './accounts/password-hasher';
import type { DashboardSession } from './accounts/sessions.service';
import { requireOperator } from './accounts/space-access';
import { tokensDetail } from './accounts/token-access';
import { auditActor, AuditService } from './audit/audit.service';
import { SignInThrottle } from './sign-in-throttle.service';

/** What an account does to itself, and an operator to accounts, for the endpoint and the pages. */
@Injectable()
export class AccountActions {
  constructor(
    private readonly admins: AdminsService,
    private readonly audit: AuditService,
    private readonly throttle: SignInThrottle,
  ) {}

  /**
   * Changes one's own password. The current password is checked under the sign-in limits (a
   * stolen session cannot guess it); every other session of the account ends.
   */
  async changeOwnPassword(
    session: DashboardSession,
    fields: { currentPassword?: unknown; newPassword?: unknown },
    address: string,
  ): Promise<void> {
    if (typeof fields.newPassword !== 'string')
      throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'newPassword is required');
    const wait = await this.throttle.admit(address, session.email);
    if (wait > 0) {
      throw new LoyaltyException(
        ErrorCode.RATE_LIMIT_EXCEEDED,
        `Too many wrong passwords: try again in ${Math.ceil(wait / 60)} minutes`,
      );
    }
    const account = await this.admins.findById(session.adminId);
    const current = typeof fields.currentPassword === 'string' ? fields.currentPassword : '';
    const matches =
      account !== null &&
      current.length <= MAX_PASSWORD_LENGTH &&
      (await verifyPassword(current, account.passwordHash));
    if (!matches) {
      await this.throttle.failed();
      throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, 'The current password is incorrect');
    }
    await this.throttle.succeeded(address, session.email);
    await this.admins.setPassword(account.id, fields.newPassword, session.sessionHash);
    await this.audit.record({ actor: auditActor(session), action: 'account.password', address });
  }

  /**
   * An operator disabling, enabling or removing an account: never the last active operator.
   * Removing revokes the tokens the account created or rotated unless `keepTokens`; the audit
   * entry names them, or says they were kept.
   */
  async manage(
    session: DashboardSession,
    id: string,
    change: 'disable' | 'enable' | 'remove',
    address: string,
    { keepTokens = false }: { keepTokens?: boolean } = {},
  ): Promise<void> {
    requireOperator(session);
    const account = await this.admins.findById(id);
    if (!account) throw new LoyaltyException(ErrorCode.NOT_FOUND, 'Account not found');
    let done: Awaited<ReturnType<AdminsService['changeAccess']>>;
    try {
      done = await this.admins.changeAccess(id, change, { keepTokens });
    } catch (error) {
      if (error instanceof AdminInputError)
        throw new LoyaltyException(ErrorCode.INVALID_ARGUMENT, error.message);
      throw error;
    }
    if (!done && change === 'remove')
      throw new LoyaltyException(ErrorCode.NOT_FOUND, 'Account not found');
    // Disabling a disabled account (or enabling an enabled one) changes nothing: no entry.
    if (!done) return;
    await this.audit.record({
      actor: auditActor(session),
      action: `account.${change}`,
      target: account.email,
      ...(change === 'remove' ? { detail: tokensDetail(done.revokedTokens, keepTokens) } : {}),
      address,
    });
  }
}
