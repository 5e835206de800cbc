import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { IsNull, Not, Repository } from 'typeorm';
import { AccessTokensService, type AccessTokenInfo } from '../../../auth/access-tokens.service';
import { parseDisplayName } from '../../../common/text/display-name';
import { SqlDialect } from '../../../storage/dialect/sql-dialect';
import { InjectSqlDialect } from '../../../storage/sql-dialect.provider';
import { TransactionRunner } from '../../../storage/transactions/transaction-runner';
import { InvitationEntity } from './invitation.entity';
import { AdminSessionEntity } from './admin-session.entity';
import { AdminEntity } from './admin.entity';
import { UNKNOWN_USER_HASH, hashPassword, verifyPassword } from './password-hasher';
import { SpaceMemberEntity } from './space-member.entity';
import { query } from '../../../storage/statements';

export const MIN_PASSWORD_LENGTH = 12;
/** Longer passwords are refused before hashing: scrypt time grows with the input. */
export const MAX_PASSWORD_LENGTH = 1024;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}\.[^\s@]{1,63}$/;
/** The email column's length. */
const MAX_EMAIL_LENGTH = 254;

/** A refusal of what someone typed: told as it is, in the page, the endpoint or the CLI. */
export class AdminInputError extends Error {}

/** An account as the dashboard shows it: never its password hash. */
export interface AccountInfo {
  id: string;
  email: string;
  name: string | null;
  operator: boolean;
  disabled: boolean;
  createdAt: string;
}

export function normalizeEmail(email: string): string {
  const normalized = email.trim().toLowerCase();
  if (normalized.length > MAX_EMAIL_LENGTH || !EMAIL.test(normalized)) {
    const shown = email.length > 60 ? `${email.slice(0, 60)}...` : email;
    throw new AdminInputError(`"${shown}" is not an email address`);
  }
  return normalized;
}

export function checkNewPassword(password: unknown): string {
  if (typeof password !== 'string' || password.length < MIN_PASSWORD_LENGTH) {
    throw new AdminInputError(`The password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new AdminInputError(`The password must be at most ${MAX_PASSWORD_LENGTH} characters`);
  }
  return password;
}

/** Dashboard accounts: operators and space members. */
@Injectable()
export class AdminsService {
  constructor(
    @InjectRepository(AdminEntity) private readonly admins: Repository<AdminEntity>,
    private readonly transactions: TransactionRunner,
    @InjectSqlDialect() private readonly dialect: SqlDialect,
    private readonly tokens: AccessTokensService,
  ) {}

  /** An operator, as `admin create` makes; members join through invitations instead. */
  async create(
    email: string,
    password: string,
    options: { operator?: boolean; name?: string | null } = {},
  ): Promise<{ id: string; email: string }> {
    const normalized = normalizeEmail(email);
    checkNewPassword(password);
    const name = options.name == null ? null : parseDisplayName(options.name, 'Name');
    if (await this.admins.exists({ where: { email: normalized } })) {
      throw new AdminInputError(`An account with the email ${normalized} exists already`);
    }
    const admin = Object.assign(new AdminEntity(), {
      id: randomUUID(),
      email: normalized,
      name,
      isOperator: options.operator ?? true,
      disabledAt: null,
      passwordHash: await hashPassword(password),
      createdAt: Date.now(),
    });
    await this.admins.insert(admin);
    return { id: admin.id, email: admin.email };
  }

  /**
   * The account when email and password match and it is not disabled; null otherwise, unknown,
   * wrong and disabled alike (and in the same time).
   */
  async verify(email: string, password: string): Promise<AdminEntity | null> {
    const admin =
      password.length > MAX_PASSWORD_LENGTH
        ? null
        : await this.admins.findOneBy({ email: email.trim().toLowerCase() });
    const matches = await verifyPassword(
      password.slice(0, MAX_PASSWORD_LENGTH),
      admin?.passwordHash ?? (await UNKNOWN_USER_HASH),
    );
    return admin && matches && admin.disabledAt === null ? admin : null;
  }

  findById(id: string): Promise<AdminEntity | null> {
    return this.admins.findOneBy({ id });
  }

  findByEmail(email: string): Promise<AdminEntity | null> {
    return this.admins.findOneBy({ email: email.trim().toLowerCase() });
  }

  async list(): Promise<AccountInfo[]> {
    const rows = await this.admins.find({ order: { createdAt: 'ASC', email: 'ASC' } });
    return rows.map(toAccountInfo);
  }

  /**
   * Sets a new password and ends every session of the account but `keepSessionHash` (the one that
   * asked, when it is the account's own). One transaction: both or neither.
   */
  async setPassword(id: string, password: string, keepSessionHash?: string): Promise<void> {
    checkNewPassword(password);
    const passwordHash = await hashPassword(password);
    await this.transactions.run(async (manager) => {
      await manager.update(AdminEntity, { id }, { passwordHash });
      await manager.delete(AdminSessionEntity, {
        adminId: id,
        ...(keepSessionHash ? { tokenHash: Not(keepSessionHash) } : {}),
      });
    });
  }

  /**
   * Disables, enables or removes an account. Disabling and removing end its sessions and close
   * the invitations it made, in the same transaction; removing also drops its memberships (the
   * audit trail keeps its entries) and, unless `keepTokens`, revokes every token it created or
   * rotated, answered for the audit trail. The last active operator is never disabled or removed: the
   * active operators' rows are locked while they are counted, so two operators disabling each
   * other at once cannot both succeed. False when the account does not exist or was already in
   * the state asked for.
   */
  async changeAccess(
    id: string,
    change: 'disable' | 'enable' | 'remove',
    { keepTokens = false }: { keepTokens?: boolean } = {},
  ): Promise<false | { revokedTokens: AccessTokenInfo[] }> {
    return this.transactions.run(async (manager) => {
      const account = await manager.findOneBy(AdminEntity, { id });
      if (!account) return false;
      if (change === 'enable') {
        const result = await manager.update(
          AdminEntity,
          { id, disabledAt: Not(IsNull()) },
          { disabledAt: null },
        );
        return (result.affected ?? 0) > 0 && { revokedTokens: [] };
      }
      if (change === 'disable' && account.disabledAt !== null) return false;
      const operators: Array<{ id: string }> = await query(
        manager,
        `SELECT id FROM admins WHERE is_operator = ? AND disabled_at IS NULL${this.dialect.lockRows('update')}`,
        [true],
      );
      if (operators.length <= 1 && operators.some((operator) => operator.id === id)) {
        throw new AdminInputError('The last active operator cannot be disabled or removed');
      }
      await manager.delete(AdminSessionEntity, { adminId: id });
      await manager.update(
        InvitationEntity,
        { invitedBy: id, closedAt: IsNull() },
        { closedAt: Date.now() },
      );
      if (change === 'disable') {
        await manager.update(AdminEntity, { id }, { disabledAt: Date.now() });
        return { revokedTokens: [] };
      }
      await manager.delete(SpaceMemberEntity, { accountId: id });
      await manager.delete(AdminEntity, { id });
      const revokedTokens = keepTokens
        ? []
        : await this.tokens.revokeCreatedBy(id, undefined, manager);
      return { revokedTokens };
    });
  }
}

export function toAccountInfo(admin: AdminEntity): AccountInfo {
  return {
    id: admin.id,
    email: admin.email,
    name: admin.name,
    operator: admin.isOperator,
    disabled: admin.disabledAt !== null,
    createdAt: new Date(admin.createdAt).toISOString(),
  };
}
